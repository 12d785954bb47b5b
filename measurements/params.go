package measurements

import (
	"fmt"
	"strconv"
	"time"
)

// Params are a measurement entry's params, with typed accessors that say
// which param is wrong and why. Values come from YAML: int, float64, bool,
// string, []any and map[string]any.
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

// Action returns the action param, checked against the allowed actions.
func (p Params) Action(allowed ...string) (string, error) {
	a, err := p.String("action", "")
	if err != nil {
		return "", err
	}
	for _, ok := range allowed {
		if a == ok {
			return a, nil
		}
	}
	return "", fmt.Errorf("param action: %q is not one of %v", a, allowed)
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

// Int returns the integer param key, or def when it is missing. A whole
// float and a numeric string are accepted, as templates produce both.
func (p Params) Int(key string, def int) (int, error) {
	v, ok := p[key]
	if !ok || v == nil {
		return def, nil
	}
	switch n := v.(type) {
	case int:
		return n, nil
	case int64:
		return int(n), nil
	case float64:
		if n == float64(int(n)) {
			return int(n), nil
		}
	case string:
		if i, err := strconv.Atoi(n); err == nil {
			return i, nil
		}
	}
	return 0, fmt.Errorf("param %s: want an integer, got %T %v", key, v, v)
}

// Float returns the number param key, or def when it is missing.
func (p Params) Float(key string, def float64) (float64, error) {
	v, ok := p[key]
	if !ok || v == nil {
		return def, nil
	}
	switch n := v.(type) {
	case int:
		return float64(n), nil
	case int64:
		return float64(n), nil
	case float64:
		return n, nil
	case string:
		if f, err := strconv.ParseFloat(n, 64); err == nil {
			return f, nil
		}
	}
	return 0, fmt.Errorf("param %s: want a number, got %T %v", key, v, v)
}

// Bool returns the boolean param key, or def when it is missing. "true" and
// "false" strings are accepted, as templates produce them.
func (p Params) Bool(key string, def bool) (bool, error) {
	v, ok := p[key]
	if !ok || v == nil {
		return def, nil
	}
	switch b := v.(type) {
	case bool:
		return b, nil
	case string:
		if parsed, err := strconv.ParseBool(b); err == nil {
			return parsed, nil
		}
	}
	return false, fmt.Errorf("param %s: want true or false, got %T %v", key, v, v)
}

// List returns the list param key, or nil when it is missing.
func (p Params) List(key string) ([]any, error) {
	v, ok := p[key]
	if !ok || v == nil {
		return nil, nil
	}
	l, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("param %s: want a list, got %T %v", key, v, v)
	}
	return l, nil
}

// Map returns the map param key as Params, or nil when it is missing.
func (p Params) Map(key string) (Params, error) {
	v, ok := p[key]
	if !ok || v == nil {
		return nil, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("param %s: want a map, got %T %v", key, v, v)
	}
	return Params(m), nil
}
