package io.gpusync;

/** The window-system binding that owns an OpenGL {@code GLsync}'s context (gpu-handle-types' {@code GlBackend}). */
public enum GlBackend {
    /** EGL (Linux, Android, surfaceless). */
    EGL,
    /** GLX (X11). */
    GLX,
    /** WGL (Windows). */
    WGL,
    /** CGL (macOS). */
    CGL
}
