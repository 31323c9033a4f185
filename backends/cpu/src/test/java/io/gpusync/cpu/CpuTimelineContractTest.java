package io.gpusync.cpu;

import io.gpusync.SyncPoint;
import io.gpusync.SyncWaiter;
import io.gpusync.SyncWaiter;
import io.gpusync.testsuite.SyncWaiterContract;

import java.util.OptionalInt;

/** The backend contract on {@link CpuTimeline}: parked threads and callbacks run by the signalling thread. */
class CpuTimelineContractTest extends SyncWaiterContract {

    @Override
    protected Subject newSubject() {
        CpuTimeline timeline = new CpuTimeline();
        SyncPoint point = timeline.at(1);
        return new OnceSubject() {
            @Override
            public SyncWaiter waiter() {
                return point.waiter();
            }

            @Override
            protected void doSignal() {
                timeline.signal(1);
            }

            @Override
            public boolean canFail() {
                return true;
            }

            @Override
            protected void doFail() {
                timeline.fail(new IllegalStateException("simulated device loss"));
            }

            @Override
            public boolean ownsNativeObject() {
                return false;
            }

            @Override
            public OptionalInt pendingRegistrations() {
                return OptionalInt.of(timeline.pendingWaits());
            }
        };
    }
}
