/**
 * Spring Boot 4 auto-configuration of gpusync: a {@link io.gpusync.reactor.SyncEngine} bean (on the WebFlux
 * server's Reactor Netty loops when there is one), its health indicator and the {@code gpusync.*} properties.
 * Registered in {@code META-INF/spring/org.springframework.boot.autoconfigure.AutoConfiguration.imports}.
 */
package io.gpusync.spring;
