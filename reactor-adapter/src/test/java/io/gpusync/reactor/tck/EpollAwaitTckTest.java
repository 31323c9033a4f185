package io.gpusync.reactor.tck;

import io.gpusync.linux.EventFd;
import io.gpusync.reactor.WaitPath;
import org.reactivestreams.Publisher;
import org.testng.annotations.AfterClass;
import reactor.core.scheduler.Schedulers;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

/** The TCK over an epoll-engine wait: an eventfd on the engine's own Netty epoll loop. */
public class EpollAwaitTckTest extends WaitPublisherVerification {
    private final List<EventFd> fds = new CopyOnWriteArrayList<>();

    public EpollAwaitTckTest() {
        super("epoll");
    }

    private EventFd eventFd() {
        EventFd fd = EventFd.create();
        fds.add(fd);
        if (engine.pathFor(fd.point().waiter()) != WaitPath.EPOLL) {
            throw new IllegalStateException("not on the epoll path: " + engine.pathFor(fd.point().waiter()));
        }
        return fd;
    }

    @Override
    public Publisher<Void> createPublisher(long elements) {
        EventFd fd = eventFd();
        Schedulers.parallel().schedule(fd::signal, 5, TimeUnit.MILLISECONDS);
        return engine.await(fd.point(), Duration.ofSeconds(5));
    }

    @Override
    public Publisher<Void> createFailedPublisher() {
        return engine.await(eventFd().point(), SHORT); // never written: times out through the epoll path
    }

    @AfterClass(dependsOnMethods = "disposeEngine")
    public void closeFds() {
        fds.forEach(EventFd::close);
    }
}
