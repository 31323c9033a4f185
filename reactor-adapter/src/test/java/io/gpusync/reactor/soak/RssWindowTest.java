package io.gpusync.reactor.soak;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The soak's leak check on RSS: growth after the drivers' warm-up counts, the warm-up itself does not. */
class RssWindowTest {
    private static final long MIB = 1024;

    @Test
    void growthCountsFromFortyPercentOfTheRunWhenTheDriversSettleEarlier() {
        assertThat(new RssWindow(45, 0).fromSeconds()).hasValue(18);
        assertThat(new RssWindow(600, 90).fromSeconds()).hasValue(240);
    }

    @Test
    void growthCountsFromWhereTheDriversSettleWhenThatIsLater() {
        assertThat(new RssWindow(200, 90).fromSeconds()).hasValue(90);
        assertThat(new RssWindow(150, 90).fromSeconds()).hasValue(90);
    }

    @Test
    void aRunThatEndsTooSoonAfterTheDriversSettleDoesNotJudgeRssAndSaysWhy() {
        RssWindow suiteRunOnNvidia = new RssWindow(45, 90);
        assertThat(suiteRunOnNvidia.fromSeconds()).isEmpty();
        assertThat(new RssWindow(140, 90).fromSeconds()).isEmpty();
        assertThat(suiteRunOnNvidia.notJudged()).contains("90 s").contains("45-s run");
    }

    @Test
    void growthPastTheBoundInsideTheWindowFailsTheRun() {
        RssWindow window = new RssWindow(120, 0);
        assertThat(window.failure(500 * MIB, (500 + RssWindow.BOUND_MIB + 2) * MIB))
                .hasValueSatisfying(why -> assertThat(why).contains("RSS grew by 50 MiB after 48 s"));
    }

    @Test
    void growthUpToTheBoundAndShrinkingPassTheRun() {
        RssWindow window = new RssWindow(120, 0);
        assertThat(window.failure(500 * MIB, (500 + RssWindow.BOUND_MIB) * MIB)).isEmpty();
        assertThat(window.failure(541 * MIB, 537 * MIB)).isEmpty();
    }
}
