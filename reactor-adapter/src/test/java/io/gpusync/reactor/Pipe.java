package io.gpusync.reactor;

import io.netty.channel.unix.FileDescriptor;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;

/** A Linux pipe (through Netty's JNI {@code pipe(2)}): a read end to wait on and a write end to drive it. */
final class Pipe implements AutoCloseable {
    final FileDescriptor readEnd;
    final FileDescriptor writeEnd;

    private Pipe(FileDescriptor[] ends) {
        this.readEnd = ends[0];
        this.writeEnd = ends[1];
    }

    static Pipe open() {
        try {
            return new Pipe(FileDescriptor.pipe());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The read end's number. */
    int readFd() {
        return readEnd.intValue();
    }

    /** Writes one byte: the read end becomes readable. */
    void writeOneByte() {
        ByteBuffer one = ByteBuffer.allocateDirect(1).put((byte) 1).flip();
        try {
            writeEnd.write(one, 0, 1);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The writer goes away: the read end hangs up. */
    void closeWriter() {
        closeQuietly(writeEnd);
    }

    /** The reader goes away: the write end reports an error condition. */
    void closeReader() {
        closeQuietly(readEnd);
    }

    @Override
    public void close() {
        closeReader();
        closeWriter();
    }

    private static void closeQuietly(FileDescriptor fd) {
        try {
            fd.close();
        } catch (IOException ignored) {
            // already closed
        }
    }
}
