/*
 * gpusync's D3D12 shim for vkd3d on x86-64 Linux (built by native-bindings' Maven build with build-shim.sh).
 *
 * Why it exists: <vkd3d_windows.h> declares every COM vtable method and D3D12CreateDevice __attribute__((ms_abi))
 * on x86-64, and the FFM linker on Linux only speaks the System V ABI. This file turns the few calls gpusync makes
 * into plain SysV functions (gs_d3d12_*), which io.gpusync.bindings.d3d12.D3d12Shim binds by hand. On Windows the
 * same Java code would call the vtables directly (the Windows FFM linker speaks that ABI); no shim there.
 *
 * Events. D3D12 reports a fence value reached through SetEventOnCompletion(value, HANDLE); vkd3d hands the HANDLE
 * to the instance's pfn_signal_event. Devices made here share one vkd3d instance whose pfn_signal_event is
 * gs_signal_event: a HANDLE minted by gs_d3d12_event_from_eventfd is a (generation, slot) pair in a table, and
 * signalling it writes 1 to that slot's eventfd (nothing else: vkd3d calls it with the fence mutex held, on the
 * signalling thread or its fence worker). A forgotten slot (gs_d3d12_event_forget) makes a late signal a no-op, so
 * registrations that never fire (a value the fence never reaches) cannot touch a closed or reused fd.
 * Handles of kind "utils" forward to vkd3d-utils' vkd3d_signal_event (the raw benchmark's blocking wait).
 */
#include <stdint.h>
#define COBJMACROS
#define INITGUID
#define WIDL_C_INLINE_WRAPPERS
/* vkd3d.h needs only these Vulkan types: declared here, so that <vulkan/vulkan.h> (libvulkan-dev) is not needed */
#define VKD3D_NO_VULKAN_H
typedef struct VkInstance_T *VkInstance;
typedef struct VkPhysicalDevice_T *VkPhysicalDevice;
typedef struct VkDevice_T *VkDevice;
typedef struct VkQueue_T *VkQueue;
typedef uint64_t VkImage;
typedef int VkFormat;
typedef void (*PFN_vkVoidFunction)(void);
typedef PFN_vkVoidFunction (*PFN_vkGetInstanceProcAddr)(VkInstance instance, const char *name);
#include <vkd3d.h>
#include <vkd3d_utils.h>

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define GS_EXPORT __attribute__((visibility("default")))
#define GS_ABI_VERSION 1
#define GS_SLOTS 65536u

enum gs_kind { GS_FREE = 0, GS_EVENTFD = 1, GS_UTILS = 2 };

struct gs_slot {
    enum gs_kind kind;
    uint32_t generation;
    int fd;
    HANDLE utils_event;
    uint32_t next_free;
};

static pthread_mutex_t gs_lock = PTHREAD_MUTEX_INITIALIZER;
static struct gs_slot gs_table[GS_SLOTS];
static uint32_t gs_used;         /* slots ever handed out: [0, gs_used) */
static uint32_t gs_free_head = UINT32_MAX;

static HANDLE gs_handle(uint32_t slot, uint32_t generation) {
    return (HANDLE)(uintptr_t)(((uint64_t)generation << 32) | (uint64_t)(slot + 1u));
}

static struct gs_slot *gs_lookup_locked(HANDLE h) {
    uint64_t bits = (uint64_t)(uintptr_t)h;
    uint32_t slot = (uint32_t)(bits & 0xffffffffu);
    if (slot == 0 || slot > gs_used) {
        return NULL;
    }
    struct gs_slot *s = &gs_table[slot - 1];
    if (s->kind == GS_FREE || s->generation != (uint32_t)(bits >> 32)) {
        return NULL;
    }
    return s;
}

static HANDLE gs_mint(enum gs_kind kind, int fd, HANDLE utils_event) {
    HANDLE h = NULL;
    pthread_mutex_lock(&gs_lock);
    uint32_t slot;
    if (gs_free_head != UINT32_MAX) {
        slot = gs_free_head;
        gs_free_head = gs_table[slot].next_free;
    } else if (gs_used < GS_SLOTS) {
        slot = gs_used++;
    } else {
        pthread_mutex_unlock(&gs_lock);
        return NULL;
    }
    struct gs_slot *s = &gs_table[slot];
    s->kind = kind;
    s->generation++;
    s->fd = fd;
    s->utils_event = utils_event;
    h = gs_handle(slot, s->generation);
    pthread_mutex_unlock(&gs_lock);
    return h;
}

/* vkd3d's pfn_signal_event: runs with the fence's mutex held; writes an eventfd and returns. */
static HRESULT gs_signal_event(HANDLE event) {
    HRESULT hr = S_OK;
    pthread_mutex_lock(&gs_lock);
    struct gs_slot *s = gs_lookup_locked(event);
    if (s != NULL && s->kind == GS_EVENTFD) {
        uint64_t one = 1;
        ssize_t n;
        do {
            n = write(s->fd, &one, sizeof(one));
        } while (n < 0 && errno == EINTR);
    } else if (s != NULL && s->kind == GS_UTILS) {
        /* under the lock, so that gs_d3d12_event_forget cannot destroy it meanwhile (it only signals a condvar) */
        hr = vkd3d_signal_event(s->utils_event);
    }
    pthread_mutex_unlock(&gs_lock);
    return hr;
}

GS_EXPORT int gs_d3d12_abi_version(void) {
    return GS_ABI_VERSION;
}

/*
 * The vkd3d instance of every device made here, created on first use and kept for the life of the process (like a
 * loaded driver): its pfn_signal_event is gs_signal_event. Fences of devices on any other instance (vkd3d-utils'
 * D3D12CreateDevice, say) would hand gs handles to a callback that does not know them, so gs_d3d12_fence_is_ours
 * lets callers refuse those.
 */
static struct vkd3d_instance *gs_instance;

static HRESULT gs_get_instance(struct vkd3d_instance **out) {
    HRESULT hr = S_OK;
    pthread_mutex_lock(&gs_lock);
    if (gs_instance == NULL) {
        struct vkd3d_instance_create_info instance_info;
        memset(&instance_info, 0, sizeof(instance_info));
        instance_info.type = VKD3D_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
        instance_info.pfn_signal_event = gs_signal_event;
        instance_info.wchar_size = sizeof(WCHAR);
        hr = vkd3d_create_instance(&instance_info, &gs_instance);
        if (FAILED(hr)) {
            gs_instance = NULL;
        }
    }
    *out = gs_instance;
    pthread_mutex_unlock(&gs_lock);
    return hr;
}

/* A D3D12 device on the shim's vkd3d instance (whose events are gs handles) and one direct queue. */
GS_EXPORT HRESULT gs_d3d12_create_device(void **device_out, void **queue_out) {
    struct vkd3d_device_create_info device_info;
    struct vkd3d_instance *instance = NULL;
    ID3D12Device *device = NULL;
    ID3D12CommandQueue *queue = NULL;
    D3D12_COMMAND_QUEUE_DESC queue_desc;
    HRESULT hr;

    if (device_out == NULL || queue_out == NULL) {
        return E_POINTER;
    }
    *device_out = NULL;
    *queue_out = NULL;
    if (FAILED(hr = gs_get_instance(&instance))) {
        return hr;
    }
    memset(&device_info, 0, sizeof(device_info));
    device_info.type = VKD3D_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
    device_info.minimum_feature_level = D3D_FEATURE_LEVEL_11_0;
    device_info.instance = instance;
    hr = vkd3d_create_device(&device_info, &IID_ID3D12Device, (void **)&device);
    if (FAILED(hr)) {
        return hr;
    }
    memset(&queue_desc, 0, sizeof(queue_desc));
    queue_desc.Type = D3D12_COMMAND_LIST_TYPE_DIRECT;
    if (FAILED(hr = ID3D12Device_CreateCommandQueue(device, &queue_desc, &IID_ID3D12CommandQueue, (void **)&queue))) {
        ID3D12Device_Release(device);
        return hr;
    }
    *device_out = device;
    *queue_out = queue;
    return S_OK;
}

GS_EXPORT HRESULT gs_d3d12_create_fence(void *device, uint64_t initial_value, void **fence_out) {
    if (device == NULL || fence_out == NULL) {
        return E_POINTER;
    }
    *fence_out = NULL;
    return ID3D12Device_CreateFence((ID3D12Device *)device, initial_value, D3D12_FENCE_FLAG_NONE,
            &IID_ID3D12Fence, fence_out);
}

GS_EXPORT uint64_t gs_d3d12_fence_completed_value(void *fence) {
    return ID3D12Fence_GetCompletedValue((ID3D12Fence *)fence);
}

GS_EXPORT HRESULT gs_d3d12_fence_signal(void *fence, uint64_t value) {
    if (fence == NULL) {
        return E_POINTER;
    }
    return ID3D12Fence_Signal((ID3D12Fence *)fence, value);
}

/* Refuses a NULL event: vkd3d 1.2 crashes on SetEventOnCompletion(v, NULL) (a blocking wait in D3D12). */
GS_EXPORT HRESULT gs_d3d12_fence_set_event_on_completion(void *fence, uint64_t value, void *event) {
    if (fence == NULL) {
        return E_POINTER;
    }
    if (event == NULL) {
        return E_INVALIDARG;
    }
    return ID3D12Fence_SetEventOnCompletion((ID3D12Fence *)fence, value, (HANDLE)event);
}

GS_EXPORT HRESULT gs_d3d12_queue_signal(void *queue, void *fence, uint64_t value) {
    if (queue == NULL || fence == NULL) {
        return E_POINTER;
    }
    return ID3D12CommandQueue_Signal((ID3D12CommandQueue *)queue, (ID3D12Fence *)fence, value);
}

/* S_OK while the fence's device is alive; its removal reason otherwise. */
GS_EXPORT HRESULT gs_d3d12_fence_device_removed_reason(void *fence) {
    ID3D12Device *device = NULL;
    HRESULT hr;
    if (fence == NULL) {
        return E_POINTER;
    }
    if (FAILED(hr = ID3D12Fence_GetDevice((ID3D12Fence *)fence, &IID_ID3D12Device, (void **)&device))) {
        return hr;
    }
    hr = ID3D12Device_GetDeviceRemovedReason(device);
    ID3D12Device_Release(device);
    return hr;
}

/* 1 if the fence's device was made by gs_d3d12_create_device (its events can write eventfds), 0 if not, or a
 * failed HRESULT. */
GS_EXPORT HRESULT gs_d3d12_fence_is_ours(void *fence) {
    ID3D12Device *device = NULL;
    HRESULT hr;
    if (fence == NULL) {
        return E_POINTER;
    }
    if (FAILED(hr = ID3D12Fence_GetDevice((ID3D12Fence *)fence, &IID_ID3D12Device, (void **)&device))) {
        return hr;
    }
    pthread_mutex_lock(&gs_lock);
    struct vkd3d_instance *ours = gs_instance;
    pthread_mutex_unlock(&gs_lock);
    hr = ours != NULL && vkd3d_instance_from_device(device) == ours ? 1 : 0;
    ID3D12Device_Release(device);
    return hr;
}

GS_EXPORT uint32_t gs_d3d12_add_ref(void *unknown) {
    return IUnknown_AddRef((IUnknown *)unknown);
}

GS_EXPORT uint32_t gs_d3d12_release(void *unknown) {
    return IUnknown_Release((IUnknown *)unknown);
}

/* A HANDLE whose signal writes 1 to fd (the caller keeps and closes fd, after gs_d3d12_event_forget). */
GS_EXPORT void *gs_d3d12_event_from_eventfd(int fd) {
    if (fd < 0) {
        return NULL;
    }
    return gs_mint(GS_EVENTFD, fd, NULL);
}

/* Makes every later signal of the handle a no-op and frees its slot (and a utils event). */
GS_EXPORT void gs_d3d12_event_forget(void *event) {
    HANDLE utils = NULL;
    pthread_mutex_lock(&gs_lock);
    struct gs_slot *s = gs_lookup_locked(event);
    if (s != NULL) {
        utils = s->kind == GS_UTILS ? s->utils_event : NULL;
        s->kind = GS_FREE;
        s->fd = -1;
        s->utils_event = NULL;
        s->next_free = gs_free_head;
        gs_free_head = (uint32_t)(s - gs_table);
    }
    pthread_mutex_unlock(&gs_lock);
    if (utils != NULL) {
        vkd3d_destroy_event(utils);
    }
}

/* A HANDLE backed by a vkd3d-utils event (auto-reset), for a thread blocked in gs_d3d12_event_wait_forever. */
GS_EXPORT void *gs_d3d12_utils_event_create(void) {
    HANDLE e = vkd3d_create_event();
    if (e == NULL) {
        return NULL;
    }
    HANDLE h = gs_mint(GS_UTILS, -1, e);
    if (h == NULL) {
        vkd3d_destroy_event(e);
    }
    return h;
}

/* vkd3d_wait_event(e, VKD3D_INFINITE) (vkd3d 1.2 takes only 0 or infinite); 0 = signalled (WAIT_OBJECT_0). The
 * caller must not forget the handle while a thread waits here. */
GS_EXPORT uint32_t gs_d3d12_utils_event_wait_forever(void *event) {
    HANDLE e = NULL;
    pthread_mutex_lock(&gs_lock);
    struct gs_slot *s = gs_lookup_locked(event);
    if (s != NULL && s->kind == GS_UTILS) {
        e = s->utils_event;
    }
    pthread_mutex_unlock(&gs_lock);
    if (e == NULL) {
        return 0xffffffffu; /* WAIT_FAILED */
    }
    return vkd3d_wait_event(e, VKD3D_INFINITE);
}

/* A device made by vkd3d-utils' D3D12CreateDevice, as a program using vkd3d directly has one: its events are
 * vkd3d-utils events, so gs_d3d12_fence_is_ours says 0 for its fences (what gpusync's tests check). */
GS_EXPORT HRESULT gs_d3d12_utils_create_device(void **device_out) {
    if (device_out == NULL) {
        return E_POINTER;
    }
    *device_out = NULL;
    return D3D12CreateDevice(NULL, D3D_FEATURE_LEVEL_11_0, &IID_ID3D12Device, device_out);
}
