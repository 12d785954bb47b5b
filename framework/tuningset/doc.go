// Package tuningset paces the actions of a phase — creating, updating or
// deleting the object bundle of one index — the way a clusterloader2 config's
// tuningSets ask, so that a test loads the cluster at the rate the config
// author meant rather than as fast as the client can go.
//
// Every type plans its starts against absolute deadlines measured from the
// start of Execute, so a slow wake-up makes later starts catch up instead of
// shifting the whole schedule. Time and randomness are injected (WithClock,
// WithRandSource), which lets tests drive a fake clock with a seeded source
// and assert exact start times.
//
// Use a Registry built from a config's tuningSets: it validates them with
// errors that name the offending field, and it gives every phase naming a
// globalQPSLoad set the same token bucket.
package tuningset
