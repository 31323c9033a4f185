package io.gpusync.cpu;

import io.gpusync.SyncException;
import io.gpusync.spi.CallbackRegistration;
import io.gpusync.spi.SignalCallbackWaiter;
import io.gpusync.spi.SignalListener;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Callback registrations of a {@link CpuTimeline} whatever order their values come in (rising ones go to its ring,
 * lower ones to its sorted map): each fires exactly once, exactly when the timeline reaches its value; a cancelled
 * one never fires; a failure reaches every pending one; {@code pendingWaits} counts what is left.
 */
class CpuTimelineRegistrationsTest {

    /** Records how many times it fired, and the value of the timeline when it did. */
    private static final class Recorder implements SignalListener {
        final long target;
        final CpuTimeline timeline;
        int fired;
        long firedAt = -1;
        SyncException error;

        Recorder(CpuTimeline timeline, long target) {
            this.timeline = timeline;
            this.target = target;
        }

        @Override
        public void signalled() {
            fired++;
            firedAt = timeline.value();
        }

        @Override
        public void failed(SyncException e) {
            fired++;
            error = e;
        }
    }

    private static CallbackRegistration register(CpuTimeline t, Recorder r) {
        return ((SignalCallbackWaiter) t.at(r.target).waiter()).onSignal(r);
    }

    @Test
    void registrationsInAnyOrderFireOnceWhenTheirValueIsReachedAndCancelledOnesNever() {
        Random random = new Random(15);
        CpuTimeline timeline = new CpuTimeline();
        List<Recorder> live = new ArrayList<>();
        List<Recorder> cancelled = new ArrayList<>();
        for (int i = 0; i < 5_000; i++) {
            // mostly rising values, with some lower and some repeated, as producers that share a timeline make
            long target = random.nextInt(10) < 7 ? 1 + i : 1 + random.nextInt(i + 1);
            Recorder r = new Recorder(timeline, target);
            CallbackRegistration reg = register(timeline, r);
            if (random.nextInt(5) == 0) {
                reg.cancel();
                reg.cancel(); // a second cancel does nothing
                cancelled.add(r);
            } else {
                live.add(r);
            }
        }
        assertThat(timeline.pendingWaits()).isEqualTo(live.size());
        for (long v = 1; v <= 5_000; v += 1 + random.nextInt(7)) { // signals that skip values complete those too
            timeline.signal(v);
            long reached = v;
            assertThat(live).allSatisfy(r -> assertThat(r.fired).as("wait for %d at %d", r.target, reached)
                    .isEqualTo(r.target <= reached ? 1 : 0));
        }
        timeline.signal(5_000);
        assertThat(live).allSatisfy(r -> {
            assertThat(r.fired).isEqualTo(1);
            assertThat(r.firedAt).isGreaterThanOrEqualTo(r.target);
        });
        assertThat(cancelled).allSatisfy(r -> assertThat(r.fired).isZero());
        assertThat(timeline.pendingWaits()).isZero();
    }

    @Test
    void aFailureReachesEveryPendingRegistrationOnceWhereverItIsKept() {
        CpuTimeline timeline = new CpuTimeline();
        List<Recorder> all = new ArrayList<>();
        for (long v : new long[] {10, 20, 30, 15, 5, 30, 40}) { // 15 and 5 go below the newest: the sorted map
            Recorder r = new Recorder(timeline, v);
            register(timeline, r);
            all.add(r);
        }
        timeline.signal(12); // 10 and 5
        timeline.fail(new IllegalStateException("device lost"));
        assertThat(all).filteredOn(r -> r.target <= 12).allSatisfy(r -> {
            assertThat(r.fired).isEqualTo(1);
            assertThat(r.error).isNull();
        });
        assertThat(all).filteredOn(r -> r.target > 12).allSatisfy(r -> {
            assertThat(r.fired).isEqualTo(1);
            assertThat(r.error).isNotNull();
        });
        assertThat(timeline.pendingWaits()).isZero();
    }

    @Test
    void cancellingEveryRegistrationLeavesNothingPendingAndLaterRegistrationsStillWork() {
        CpuTimeline timeline = new CpuTimeline();
        List<CallbackRegistration> regs = new ArrayList<>();
        for (long v = 100_000; v >= 1; v -= 7) { // falling values: all but the first in the sorted map
            regs.add(register(timeline, new Recorder(timeline, v)));
        }
        for (long v = 1; v <= 100_000; v += 7) { // rising ones: the ring grows
            regs.add(register(timeline, new Recorder(timeline, v)));
        }
        regs.forEach(CallbackRegistration::cancel);
        assertThat(timeline.pendingWaits()).isZero();
        Recorder low = new Recorder(timeline, 3);
        Recorder high = new Recorder(timeline, 4);
        register(timeline, high);
        register(timeline, low);
        timeline.signal(3);
        assertThat(low.fired).isEqualTo(1);
        assertThat(high.fired).isZero();
        timeline.signal(4);
        assertThat(high.fired).isEqualTo(1);
    }
}
