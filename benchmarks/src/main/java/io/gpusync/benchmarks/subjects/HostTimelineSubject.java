package io.gpusync.benchmarks.subjects;

import io.gpusync.SyncPoint;
import io.gpusync.SyncWaiter;
import io.gpusync.cpu.CpuTimeline;

import java.util.function.Function;

/**
 * Points on a {@link CpuTimeline} (values 1, 2, 3… of one timeline per stream), signalled with
 * {@code timeline.signal(value)}. The waiter is the timeline's own (callback + parking wait) or a wrapper
 * that advertises a single ability (see {@link PathWaiters}), so each engine path can be measured on the
 * same primitive.
 */
public final class HostTimelineSubject implements Subject {
    private final String name;
    private final String description;
    private final Function<SyncPoint, SyncWaiter> wrap;

    public HostTimelineSubject(String name, String description, Function<SyncPoint, SyncWaiter> wrap) {
        this.name = name;
        this.description = description;
        this.wrap = wrap;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public String description() {
        return description;
    }

    @Override
    public Stream newStream() {
        return new TimelineStream();
    }

    private final class TimelineStream implements Stream {
        private final CpuTimeline timeline = new CpuTimeline();
        private long last;

        @Override
        public Point next() {
            long value = ++last;
            SyncWaiter waiter = wrap.apply(timeline.at(value));
            return new Point() {
                @Override
                public SyncWaiter waiter() {
                    return waiter;
                }

                @Override
                public void signal() {
                    synchronized (TimelineStream.this) {
                        if (Long.compareUnsigned(timeline.value(), value) < 0) {
                            timeline.signal(value);
                        }
                    }
                }
            };
        }

        @Override
        public synchronized void signalAll() {
            if (Long.compareUnsigned(timeline.value(), last) < 0) {
                timeline.signal(last);
            }
        }

        @Override
        public long registrations() {
            return timeline.pendingWaits();
        }

        @Override
        public void close() {
        }
    }
}
