package measurements

import "fmt"

// FailIfNotMeasuredParam is the entry param that says what the
// measurement being not measured means to the run:
//   - true: the step fails (a gate whose verdict means nothing without
//     it); the runner enforces that;
//   - false: accepted; the summary is Optional and the run's verdict does
//     not count it;
//   - unset: an SLO method left unmeasured makes the run inconclusive; an
//     informational one is only reported.
const FailIfNotMeasuredParam = "failIfNotMeasured"

// FailIfNotMeasured reads the entry's failIfNotMeasured: its value, and
// whether the entry sets it at all. A value that is not a boolean is an
// error naming the param.
func FailIfNotMeasured(params map[string]any) (value, set bool, err error) {
	if v, ok := params[FailIfNotMeasuredParam]; !ok || v == nil {
		return false, false, nil
	}
	value, err = Params(params).Bool(FailIfNotMeasuredParam, false)
	if err != nil {
		return false, false, err
	}
	return value, true, nil
}

// notePolicy remembers an identifier's failIfNotMeasured. Any call of the
// identifier may set it (configs keep an identifier's params on its start
// entry, or on its gather); the last call that sets it decides, and its
// summaries are Optional when that says false.
func (m *Manager) notePolicy(key [2]string, params map[string]any) error {
	value, set, err := FailIfNotMeasured(params)
	if err != nil {
		return fmt.Errorf("%s %s: %w", key[0], key[1], err)
	}
	if set {
		m.mu.Lock()
		m.optional[key] = !value
		m.mu.Unlock()
	}
	return nil
}

// RecordUnsupported records a call of a method kscale lacks, which the user
// chose to run without (--skip-unsupported-measurements), as not measured
// with reason: one summary per identifier, however many calls name it.
//
// kscale cannot tell whether a method it lacks would have judged an SLO,
// so the summary counts as an SLO left unmeasured: the run is inconclusive
// unless its entry sets failIfNotMeasured: false or the run allows
// unmeasured SLOs. A gate does not pass on measurements that never ran.
func (m *Manager) RecordUnsupported(method, identifier string, params map[string]any, reason string) error {
	key := [2]string{method, identifier}
	if err := m.notePolicy(key, params); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.skipped[key] {
		return nil
	}
	m.skipped[key] = true
	m.summaries = append(m.summaries, Summary{
		Method: method, Identifier: identifier, Verdict: NotMeasured, Reason: reason, SLO: true,
	})
	return nil
}
