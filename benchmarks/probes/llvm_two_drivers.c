// Do two LLVM-based drivers in one process corrupt the heap when they compile at the same time, with no gpusync and
// no JVM? llvmpipe (GL via EGL surfaceless) and PoCL (OpenCL) load the same libLLVM here, and lavapipe (Vulkan) too;
// the soak of every backend opens all three in one JVM and once died at start-up with glibc's "malloc(): corrupted
// top size". Each run starts three threads at once behind a barrier: GL compiles and draws with fresh shader
// programs, OpenCL builds and runs fresh programs, Vulkan creates and destroys lavapipe instances and devices; for
// ROUNDS rounds each. Exit 0: done; a crash or glibc's abort shows in the exit status.
//
//   gcc -O2 -o llvm_two_drivers llvm_two_drivers.c -lEGL -lGLESv2 -lOpenCL -lvulkan -lpthread
//   VK_DRIVER_FILES=/usr/share/vulkan/icd.d/lvp_icd.x86_64.json EGL_PLATFORM=surfaceless
//     LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libc_malloc_debug.so.0 MALLOC_CHECK_=3 MALLOC_PERTURB_=N
//     ./llvm_two_drivers [rounds]
// benchmarks/probes/llvm_two_drivers.sh runs it many times and counts the failures.
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <EGL/egl.h>
#include <EGL/eglext.h>
#include <GLES3/gl3.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vulkan/vulkan.h>

static pthread_barrier_t start;
static int rounds = 4;

#define DIE(...) do { fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); exit(3); } while (0)

static GLuint shader(GLenum kind, const char *src) {
    GLuint s = glCreateShader(kind);
    glShaderSource(s, 1, &src, NULL);
    glCompileShader(s);
    GLint ok;
    glGetShaderiv(s, GL_COMPILE_STATUS, &ok);
    if (!ok) DIE("GL shader did not compile");
    return s;
}

static void *gl_main(void *arg) {
    (void) arg;
    EGLDisplay dpy = eglGetPlatformDisplay(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, NULL);
    if (dpy == EGL_NO_DISPLAY || !eglInitialize(dpy, NULL, NULL)) DIE("no surfaceless EGL display");
    static const EGLint ca[] = {EGL_RENDERABLE_TYPE, EGL_OPENGL_ES3_BIT, EGL_SURFACE_TYPE, EGL_PBUFFER_BIT, EGL_NONE};
    EGLConfig config;
    EGLint n;
    if (!eglChooseConfig(dpy, ca, &config, 1, &n) || n < 1) DIE("no GLES3 config");
    eglBindAPI(EGL_OPENGL_ES_API);
    static const EGLint attribs[] = {EGL_CONTEXT_MAJOR_VERSION, 3, EGL_NONE};
    EGLContext ctx = eglCreateContext(dpy, config, EGL_NO_CONTEXT, attribs);
    static const EGLint pb[] = {EGL_WIDTH, 256, EGL_HEIGHT, 256, EGL_NONE};
    EGLSurface surface = eglCreatePbufferSurface(dpy, config, pb);
    if (!eglMakeCurrent(dpy, surface, surface, ctx)) DIE("eglMakeCurrent");
    pthread_barrier_wait(&start);
    for (int r = 0; r < rounds; r++) {
        char fs[512];
        snprintf(fs, sizeof fs, "#version 300 es\nprecision highp float;\nout vec4 c;\nvoid main() {\n"
                 "  float x = gl_FragCoord.x * %d.0;\n  for (int i = 0; i < %d; i++) x = sin(x) * 1.0%d;\n"
                 "  c = vec4(x, 0.5, float(%d) / 7.0, 1.0);\n}\n", r + 1, 4 + r, r, r);
        GLuint p = glCreateProgram();
        glAttachShader(p, shader(GL_VERTEX_SHADER, "#version 300 es\nvoid main() {\n"
                                 "  vec2 v[3] = vec2[](vec2(-1,-1), vec2(3,-1), vec2(-1,3));\n"
                                 "  gl_Position = vec4(v[gl_VertexID], 0.0, 1.0);\n}\n"));
        glAttachShader(p, shader(GL_FRAGMENT_SHADER, fs));
        glLinkProgram(p);
        glUseProgram(p);
        glDrawArrays(GL_TRIANGLES, 0, 3); // llvmpipe compiles the fragment shader's variant for this draw
        glFinish();
        glDeleteProgram(p);
    }
    eglMakeCurrent(dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
    eglDestroySurface(dpy, surface);
    eglDestroyContext(dpy, ctx);
    eglTerminate(dpy);
    return NULL;
}

static void *cl_main(void *arg) {
    (void) arg;
    cl_platform_id platform;
    cl_device_id device;
    cl_int err;
    if (clGetPlatformIDs(1, &platform, NULL) != CL_SUCCESS) DIE("no OpenCL platform");
    if (clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL) != CL_SUCCESS) DIE("no OpenCL device");
    cl_context ctx = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    cl_command_queue q = clCreateCommandQueueWithProperties(ctx, device, NULL, &err);
    cl_mem buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 64 * sizeof(cl_int), NULL, &err);
    pthread_barrier_wait(&start);
    for (int r = 0; r < rounds; r++) {
        char src[256];
        snprintf(src, sizeof src, "kernel void k%d(global int *a) { size_t i = get_global_id(0); a[i] = a[i] * %d + %d; }",
                 r, r + 2, r);
        const char *s = src;
        cl_program p = clCreateProgramWithSource(ctx, 1, &s, NULL, &err);
        if (clBuildProgram(p, 1, &device, NULL, NULL, NULL) != CL_SUCCESS) DIE("clBuildProgram");
        char name[16];
        snprintf(name, sizeof name, "k%d", r);
        cl_kernel k = clCreateKernel(p, name, &err);
        clSetKernelArg(k, 0, sizeof buf, &buf);
        size_t global = 64;
        clEnqueueNDRangeKernel(q, k, 1, NULL, &global, NULL, 0, NULL, NULL); // PoCL compiles the work-group function
        clFinish(q);
        clReleaseKernel(k);
        clReleaseProgram(p);
    }
    clReleaseMemObject(buf);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    return NULL;
}

static void *vk_main(void *arg) {
    (void) arg;
    pthread_barrier_wait(&start);
    for (int r = 0; r < rounds; r++) {
        VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO, .apiVersion = VK_API_VERSION_1_2};
        VkInstanceCreateInfo ici = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, .pApplicationInfo = &app};
        VkInstance inst;
        if (vkCreateInstance(&ici, NULL, &inst) != VK_SUCCESS) DIE("vkCreateInstance");
        uint32_t n = 1;
        VkPhysicalDevice pd;
        vkEnumeratePhysicalDevices(inst, &n, &pd);
        if (n < 1) DIE("no Vulkan device");
        float prio = 1.0f;
        VkDeviceQueueCreateInfo qci = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO, .queueCount = 1,
                                       .pQueuePriorities = &prio};
        VkDeviceCreateInfo dci = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, .queueCreateInfoCount = 1,
                                  .pQueueCreateInfos = &qci};
        VkDevice dev;
        if (vkCreateDevice(pd, &dci, NULL, &dev) != VK_SUCCESS) DIE("vkCreateDevice");
        vkDestroyDevice(dev, NULL);
        vkDestroyInstance(inst, NULL);
    }
    return NULL;
}

int main(int argc, char **argv) {
    if (argc > 1) rounds = atoi(argv[1]);
    pthread_barrier_init(&start, NULL, 3);
    pthread_t t[3];
    pthread_create(&t[0], NULL, gl_main, NULL);
    pthread_create(&t[1], NULL, cl_main, NULL);
    pthread_create(&t[2], NULL, vk_main, NULL);
    for (int i = 0; i < 3; i++) pthread_join(t[i], NULL);
    return 0;
}
