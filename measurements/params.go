package measurements

import (
	"fmt"
	"time"
)

// Params are a measurement entry's params, with typed accessors that say
// which param is wrong and why.
type Params map[string]any

// String returns the string param key, or def when it is missing.
func (p Params) String(key, def string) (string, error) {
	v, ok := p[key]
	if !ok || v == nil {
		return def, nil
	}
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("param %s: want a string, got %T %v", key, v, v)
	}
	return s, nil
}

// Duration returns the duration param key ("30s", "5m"), or def when it is
// missing.
func (p Params) Duration(key string, def time.Duration) (time.Duration, error) {
	v, ok := p[key]
	if !ok || v == nil {
		return def, nil
	}
	s, ok := v.(string)
	if !ok {
		return 0, fmt.Errorf("param %s: want a duration like 30s, got %T %v", key, v, v)
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("param %s: %q is not a duration (like 30s or 5m)", key, s)
	}
	return d, nil
}
