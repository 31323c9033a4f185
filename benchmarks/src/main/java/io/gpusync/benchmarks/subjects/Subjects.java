package io.gpusync.benchmarks.subjects;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;

/**
 * Every subject the benchmarks know, by name. To add a backend, implement {@link Subject} (with
 * {@link Subject#unavailableReason()} where its driver may be missing) and add it to {@link #all()}; the
 * harness ({@code --subjects=NAME}, {@code --path-subjects=NAME}) and JMH ({@code -p subject=NAME}) pick it up.
 */
public final class Subjects {
    /** The wait set shared by every {@code host-timeline/wait-set} point (one "device"). */
    private static final PathWaiters.HostWaitSet WAIT_SET = new PathWaiters.HostWaitSet();

    private Subjects() {
    }

    public static final String HOST_TIMELINE = "host-timeline";
    public static final String EVENTFD = "eventfd";

    /** All subjects, in report order. */
    public static Map<String, Subject> all() {
        Map<String, Subject> m = new LinkedHashMap<>();
        for (Subject s : List.of(
                new HostTimelineSubject(HOST_TIMELINE,
                        "CpuTimeline points (one timeline per stream, values 1, 2, 3…), signalled by timeline.signal(v); "
                                + "the engine serves them by CALLBACK", p -> p.waiter()),
                new EventFdSubject(),
                new HostTimelineSubject("host-timeline/wait-set",
                        "CpuTimeline points wrapped as members of one host wait set (a model of a Vulkan device's "
                                + "vkWaitSemaphores WAIT_ANY): the WAIT_SET path",
                        p -> PathWaiters.member(WAIT_SET, p.waiter())),
                new HostTimelineSubject("host-timeline/blocking",
                        "CpuTimeline points wrapped to offer only a parking blocking wait: the BLOCKING path",
                        p -> PathWaiters.blockingOnly(p.waiter())),
                new HostTimelineSubject("host-timeline/probe",
                        "CpuTimeline points wrapped to offer only a probe (isSignaled): the PROBE path",
                        p -> PathWaiters.probeOnly(p.waiter())),
                VulkanTimelineSubject.hostSignalled(),
                VulkanTimelineSubject.queueSignalled(),
                new OpenClUserEventSubject(),
                new OpenClKernelSubject(),
                new EglReusableSubject(),
                CudaGatedSubject.timeline(),
                CudaGatedSubject.event())) {
            m.put(s.name(), s);
        }
        return m;
    }

    public static Subject byName(String name) {
        Subject s = all().get(name);
        if (s == null) {
            throw new NoSuchElementException("no subject " + name + "; known: " + all().keySet());
        }
        return s;
    }
}
