// Package measurements holds the measurement methods a config's
// measurement steps call, registered by their clusterloader2 names
// (PodStartupLatency, APIResponsivenessPrometheus, Sleep, ...), one method
// per file. A Manager keeps one instance per identifier for the whole run,
// so that `action: start` and `action: gather` of one identifier meet.
// Each method declares where it registers whether it judges an SLO (Kind):
// an SLO method that measured nothing makes the run inconclusive.
package measurements
