/**
 * jextract-generated FFM bindings used by gpusync's backends, plus the few hand-written downcalls
 * jextract cannot make (errno capture). No logic lives here.
 */
module io.gpusync.bindings {
}
