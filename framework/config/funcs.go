package config

import (
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/template"
	"unicode/utf8"
)

// Size limits of the generating functions: generous for real configs
// (namespaces, nodes, ConfigMap payloads), small enough that a typo like
// Loop 1e9 fails at once instead of exhausting memory.
const (
	maxSliceLen = 1 << 20
	maxRandData = 16 << 20
)

// funcMap returns the template functions clusterloader2 configs use.
// src is the file being rendered (see renderer.resolve for where includes
// are looked for). Every function returns an error on bad input:
// text/template reports it with the template position of the call.
func (r *renderer) funcMap(src *source) template.FuncMap {
	return template.FuncMap{
		"DefaultParam":     DefaultParam,
		"AddInt":           AddInt,
		"SubtractInt":      SubtractInt,
		"MultiplyInt":      MultiplyInt,
		"DivideInt":        DivideInt,
		"AddFloat":         AddFloat,
		"SubtractFloat":    SubtractFloat,
		"MultiplyFloat":    MultiplyFloat,
		"DivideFloat":      DivideFloat,
		"MaxInt":           MaxInt,
		"MinInt":           MinInt,
		"MaxFloat":         MaxFloat,
		"MinFloat":         MinFloat,
		"Mod":              Mod,
		"Ceil":             Ceil,
		"IfThenElse":       IfThenElse,
		"Loop":             Loop,
		"Seq":              Seq,
		"SliceOfZeros":     SliceOfZeros,
		"RandInt":          RandInt,
		"RandIntRange":     RandIntRange,
		"RandData":         RandData,
		"RandDataWithSeed": RandDataWithSeed,
		"StringSplit":      StringSplit,
		"Concat":           Concat,
		"Lowercase":        Lowercase,
		"YamlQuote":        YamlQuote,
		"IncludeFile": func(path string) (string, error) {
			return r.includeFile(src, path)
		},
		"IncludeEmbedFile": func(path string) (string, error) {
			return r.includeEmbedFile(src, path)
		},
	}
}

// DefaultParam returns def when param is missing (nil): the idiom of
// optional parameters, {{$X := DefaultParam .CL2_X 5}}.
func DefaultParam(param, def any) any {
	if param == nil {
		return def
	}
	return param
}

// The Int family computes as clusterloader2 does: every argument is taken
// as a number (integers, floats, numeric strings), the arithmetic is done
// on floats and the result truncated toward zero. So MultiplyInt 10 0.5 is
// 5, AddInt 10 1.25 is 11 and DivideInt -7 2 is -3.

// AddInt sums numbers and truncates the sum.
func AddInt(nums ...any) (int, error) { return truncated(AddFloat(nums...)) }

// SubtractInt returns a - b, truncated.
func SubtractInt(a, b any) (int, error) { return truncated(SubtractFloat(a, b)) }

// MultiplyInt multiplies numbers and truncates the product.
func MultiplyInt(nums ...any) (int, error) { return truncated(MultiplyFloat(nums...)) }

// DivideInt returns a / b, truncated.
func DivideInt(a, b any) (int, error) { return truncated(DivideFloat(a, b)) }

// Mod returns a modulo b, each truncated first; the result has the sign of
// a, as Go's % (and clusterloader2's Mod).
func Mod(a, b any) (int, error) {
	fs, err := floats([]any{a, b}, 2)
	if err != nil {
		return 0, err
	}
	x, err := truncated(fs[0], nil)
	if err != nil {
		return 0, err
	}
	y, err := truncated(fs[1], nil)
	if err != nil {
		return 0, err
	}
	if y == 0 {
		return 0, errors.New("modulo by zero")
	}
	return x % y, nil
}

// truncated turns the result of float arithmetic into the Int family's
// result: truncated toward zero, or an error when no int holds it.
func truncated(f float64, err error) (int, error) {
	if err != nil {
		return 0, err
	}
	if math.IsInf(f, 0) || math.IsNaN(f) || f >= math.MaxInt64 || f < math.MinInt64 {
		return 0, fmt.Errorf("%v does not fit an integer", f)
	}
	return int(f), nil
}

// AddFloat sums numbers.
func AddFloat(nums ...any) (float64, error) {
	return fold(nums, func(a, b float64) float64 { return a + b })
}

// SubtractFloat returns a - b.
func SubtractFloat(a, b any) (float64, error) {
	fs, err := floats([]any{a, b}, 2)
	if err != nil {
		return 0, err
	}
	return fs[0] - fs[1], nil
}

// MultiplyFloat multiplies numbers.
func MultiplyFloat(nums ...any) (float64, error) {
	return fold(nums, func(a, b float64) float64 { return a * b })
}

// DivideFloat returns a / b; dividing by zero is an error rather than an
// Inf that would surface later as an odd YAML value.
func DivideFloat(a, b any) (float64, error) {
	fs, err := floats([]any{a, b}, 2)
	if err != nil {
		return 0, err
	}
	if fs[1] == 0 {
		return 0, errors.New("division by zero")
	}
	return fs[0] / fs[1], nil
}

// MaxInt returns the largest of one or more numbers, truncated.
func MaxInt(nums ...any) (int, error) { return truncated(MaxFloat(nums...)) }

// MinInt returns the smallest of one or more numbers, truncated.
func MinInt(nums ...any) (int, error) { return truncated(MinFloat(nums...)) }

// MaxFloat returns the largest of one or more numbers.
func MaxFloat(nums ...any) (float64, error) {
	return fold(nums, func(a, b float64) float64 { return max(a, b) })
}

// MinFloat returns the smallest of one or more numbers.
func MinFloat(nums ...any) (float64, error) {
	return fold(nums, func(a, b float64) float64 { return min(a, b) })
}

// fold converts one or more arguments to numbers and combines them left to
// right with op: the one body of the template arithmetic.
func fold(nums []any, op func(a, b float64) float64) (float64, error) {
	vs, err := floats(nums, 1)
	if err != nil {
		return 0, err
	}
	acc := vs[0]
	for _, v := range vs[1:] {
		acc = op(acc, v)
	}
	return acc, nil
}

// Ceil rounds a number up to an integer, for "enough groups to hold X".
func Ceil(x any) (int, error) {
	f, err := toFloat(x)
	if err != nil {
		return 0, err
	}
	c := math.Ceil(f)
	if math.IsNaN(c) || c >= math.MaxInt64 || c < math.MinInt64 {
		return 0, fmt.Errorf("%v does not fit an integer", f)
	}
	return int(c), nil
}

// IfThenElse is a ternary for use inside expressions. The condition follows
// the template truth rules (false, 0, "", nil and empty collections are
// false), so flags from CL2_* variables of any type work.
func IfThenElse(cond, then, otherwise any) any {
	if truth, ok := template.IsTrue(cond); ok && truth {
		return then
	}
	return otherwise
}

// Loop returns 0..n-1, for {{range $i := Loop .N}}.
func Loop(n any) ([]int, error) {
	c, err := count(n)
	if err != nil {
		return nil, err
	}
	s := make([]int, c)
	for i := range s {
		s[i] = i
	}
	return s, nil
}

// Seq is clusterloader2's deprecated name for SliceOfZeros: Seq N is N
// zeros, not a count.
func Seq(n any) ([]int, error) { return SliceOfZeros(n) }

// SliceOfZeros returns n zeros.
func SliceOfZeros(n any) ([]int, error) {
	c, err := count(n)
	if err != nil {
		return nil, err
	}
	return make([]int, c), nil
}

// RandInt returns a random integer in [0, n], both ends included.
func RandInt(n any) (int, error) {
	i, err := toInt(n)
	if err != nil {
		return 0, err
	}
	if i < 0 {
		return 0, fmt.Errorf("want a bound of at least 0, got %d", i)
	}
	return rand.IntN(i + 1), nil
}

// RandIntRange returns a random integer in [lo, hi], both ends included;
// lo when hi is not above it.
func RandIntRange(lo, hi any) (int, error) {
	is, err := ints([]any{lo, hi}, 2)
	if err != nil {
		return 0, err
	}
	if is[1] <= is[0] {
		return is[0], nil
	}
	span := uint64(is[1]) - uint64(is[0]) + 1
	return is[0] + int(rand.Uint64N(span)), nil
}

const randAlphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

// RandData returns n random letters and digits: payload for objects whose
// size matters (ConfigMaps, Secrets), safe in any YAML position.
func RandData(n any) (string, error) {
	return randData(n, rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64())))
}

// RandDataWithSeed is RandData with a seed, so that repeated renders (the
// update of an object) produce the same payload. The seed is a number or,
// as clusterloader2's configs pass the object's name, any other value.
func RandDataWithSeed(n, seed any) (string, error) {
	s, err := toInt(seed)
	if err != nil {
		h := fnv.New64a()
		fmt.Fprint(h, seed)
		s = int(h.Sum64())
	}
	return randData(n, rand.New(rand.NewPCG(uint64(s), 0x6b7363616c65)))
}

func randData(n any, rng *rand.Rand) (string, error) {
	c, err := toInt(n)
	if err != nil {
		return "", err
	}
	if c < 0 || c > maxRandData {
		return "", fmt.Errorf("length %d is outside 0..%d", c, maxRandData)
	}
	b := make([]byte, c)
	for i := range b {
		b[i] = randAlphabet[rng.IntN(len(randAlphabet))]
	}
	return string(b), nil
}

// StringSplit splits s at sep (default ","), for list-valued CL2_*
// variables. An empty string is an empty list, not a list of one "".
func StringSplit(s any, sep ...string) ([]string, error) {
	str, ok := s.(string)
	if !ok {
		return nil, fmt.Errorf("want a string, got %v (%T)", s, s)
	}
	if len(sep) > 1 {
		return nil, fmt.Errorf("want at most one separator, got %d", len(sep))
	}
	sp := ","
	if len(sep) == 1 {
		sp = sep[0]
	}
	if str == "" {
		return []string{}, nil
	}
	return strings.Split(str, sp), nil
}

// Concat joins the text forms of its arguments without separators.
func Concat(parts ...any) string {
	var b strings.Builder
	for _, p := range parts {
		fmt.Fprint(&b, p)
	}
	return b.String()
}

// Lowercase lowercases the text form of s (names must be lowercase in
// Kubernetes, parameters often are not).
func Lowercase(s any) string {
	return strings.ToLower(fmt.Sprint(s))
}

// YamlQuote makes any text safe as a YAML scalar: a double-quoted string
// on a single line with YAML escapes (\n, \", \\, \uXXXX). Being one line,
// it reads back the same whatever the indentation of the position it is
// written at; indent is accepted for clusterloader2 compatibility (it says
// how deep that position is) and must be a non-negative integer.
func YamlQuote(s any, indent any) (string, error) {
	in, err := toInt(indent)
	if err != nil {
		return "", err
	}
	if in < 0 {
		return "", fmt.Errorf("indent must not be negative, got %d", in)
	}
	str := fmt.Sprint(s)
	if !utf8.ValidString(str) {
		str = strings.ToValidUTF8(str, "\uFFFD")
	}
	return strconv.Quote(str), nil
}

// includeFile returns a file's content verbatim. As clusterloader2's, it
// expands $VARIABLES in the path and reads an absolute path as it is; any
// other path is resolved as the config's own paths are.
func (r *renderer) includeFile(from *source, path string) (string, error) {
	expanded := os.ExpandEnv(path)
	abs := expanded
	if _, err := os.Stat(abs); !filepath.IsAbs(abs) || err != nil {
		abs, _ = r.resolve(from, expanded)
	}
	b, err := os.ReadFile(abs)
	if err != nil {
		return "", readError(path, abs, err)
	}
	return string(b), nil
}

// includeEmbedFile returns a file of the config's folder verbatim, as
// clusterloader2's does: what it holds is not rendered.
func (r *renderer) includeEmbedFile(from *source, path string) (string, error) {
	abs, _ := r.resolve(from, path)
	b, err := os.ReadFile(abs)
	if err != nil {
		return "", readError(path, abs, err)
	}
	return string(b), nil
}

// ints converts template arguments to ints, naming the bad argument.
func ints(args []any, least int) ([]int, error) {
	if len(args) < least {
		return nil, fmt.Errorf("want at least %d arguments, got %d", least, len(args))
	}
	out := make([]int, len(args))
	for i, a := range args {
		v, err := toInt(a)
		if err != nil {
			if len(args) == 1 {
				return nil, err
			}
			return nil, fmt.Errorf("argument %d: %w", i+1, err)
		}
		out[i] = v
	}
	return out, nil
}

func floats(args []any, least int) ([]float64, error) {
	if len(args) < least {
		return nil, fmt.Errorf("want at least %d arguments, got %d", least, len(args))
	}
	out := make([]float64, len(args))
	for i, a := range args {
		v, err := toFloat(a)
		if err != nil {
			if len(args) == 1 {
				return nil, err
			}
			return nil, fmt.Errorf("argument %d: %w", i+1, err)
		}
		out[i] = v
	}
	return out, nil
}

// toInt accepts any Go integer, a float and a numeric string (override
// files quote numbers sometimes); a fraction is truncated toward zero, as
// clusterloader2 converts every numeric argument.
func toInt(v any) (int, error) {
	switch x := v.(type) {
	case int:
		return x, nil
	case int8:
		return int(x), nil
	case int16:
		return int(x), nil
	case int32:
		return int(x), nil
	case int64:
		return int(x), nil
	case uint:
		return uintToInt(uint64(x))
	case uint8:
		return int(x), nil
	case uint16:
		return int(x), nil
	case uint32:
		return int(x), nil
	case uint64:
		return uintToInt(x)
	case float32:
		return floatToInt(float64(x))
	case float64:
		return floatToInt(x)
	case string:
		if i, err := strconv.ParseInt(strings.TrimSpace(x), 10, 0); err == nil {
			return int(i), nil
		}
		if f, err := strconv.ParseFloat(strings.TrimSpace(x), 64); err == nil {
			return floatToInt(f)
		}
		return 0, fmt.Errorf("%q is not an integer", x)
	case nil:
		return 0, errors.New("missing value (nil), want an integer")
	}
	return 0, fmt.Errorf("%v (%T) is not an integer", v, v)
}

func uintToInt(u uint64) (int, error) {
	if u > math.MaxInt {
		return 0, fmt.Errorf("%d does not fit an integer", u)
	}
	return int(u), nil
}

func floatToInt(f float64) (int, error) { return truncated(f, nil) }

func toFloat(v any) (float64, error) {
	switch x := v.(type) {
	case float64:
		return x, nil
	case float32:
		return float64(x), nil
	case string:
		if f, err := strconv.ParseFloat(strings.TrimSpace(x), 64); err == nil {
			return f, nil
		}
		return 0, fmt.Errorf("%q is not a number", x)
	case nil:
		return 0, errors.New("missing value (nil), want a number")
	}
	if i, err := toInt(v); err == nil {
		return float64(i), nil
	}
	return 0, fmt.Errorf("%v (%T) is not a number", v, v)
}

// count validates a length argument.
func count(n any) (int, error) {
	c, err := toInt(n)
	if err != nil {
		return 0, err
	}
	if c < 0 || c > maxSliceLen {
		return 0, fmt.Errorf("length %d is outside 0..%d", c, maxSliceLen)
	}
	return c, nil
}
