package config

import (
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// renderText renders text as the file t.yaml in dir, strictly: a key
// nobody set is an error.
func renderText(dir, text string, data any) (string, error) {
	r := &renderer{topAbs: dir, topDisp: dir, strict: true}
	src := &source{disp: "t.yaml", abs: filepath.Join(dir, "t.yaml"), text: []byte(text)}
	if e := r.render(src, data); e != nil {
		return "", e
	}
	return string(src.rendered), nil
}

func TestTemplateFunctions(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"inc.txt":         "included {{.NotRendered}}\n",
		"sub/emb.yaml":    "v: {{.X}}",
		"sub/leaf.txt":    "leaf",
		"top.txt":         "from top",
		"sub/usetop.yaml": `{{IncludeFile "/top.txt"}}`,
	})
	t.Setenv("KSCALE_TEST_SUB", "sub")
	data := map[string]any{
		"X": 7, "F": 2.0, "Half": 2.5, "I64": int64(4), "S": "4", "Word": "abc",
		"A": map[string]any{"B": 1}, "Nil": nil, "CL2_SET": "yes", "Big": 1e300,
	}
	tests := []struct {
		name, tmpl, want, wantErr string
	}{
		{"DefaultParam missing", `{{DefaultParam .Missing 5}}`, "5", ""},
		{"DefaultParam present", `{{DefaultParam .X 5}}`, "7", ""},
		{"DefaultParam nil value", `{{DefaultParam .Nil 5}}`, "5", ""},
		{"DefaultParam assigned", `{{$x := DefaultParam .CL2_FOO "1m"}}{{$x}}`, "1m", ""},
		{"DefaultParam env set", `{{$x := DefaultParam .CL2_SET "no"}}{{$x}}`, "yes", ""},
		{"DefaultParam nested missing", `{{DefaultParam .A.C 3}}`, "3", ""},
		{"DefaultParam nested present", `{{DefaultParam .A.B 3}}`, "1", ""},
		{"DefaultParam via $ in range", `{{range Loop 2}}{{DefaultParam $.Missing 4}}{{end}}`, "44", ""},
		{"DefaultParam in parens", `{{AddInt (DefaultParam .M 2) 1}}`, "3", ""},
		{"DefaultParam in if", `{{if DefaultParam .M true}}on{{end}}`, "on", ""},
		{"missing key is an error", "a\n  {{.Missing}}", "", `t.yaml:2:5: at <.Missing>: map has no entry for key "Missing"`},
		{"missing key beside DefaultParam", `{{DefaultParam .M .Other}}`, "", `map has no entry for key "Other"`},

		{"AddInt", `{{AddInt 1 2 3}}`, "6", ""},
		{"AddInt integral float", `{{AddInt 1 .F}}`, "3", ""},
		{"AddInt int64", `{{AddInt .I64 1}}`, "5", ""},
		{"AddInt numeric string", `{{AddInt .S 1}}`, "5", ""},
		{"AddInt fraction truncates the sum", `{{AddInt 1 .Half}}`, "3", ""},
		{"AddInt sums before truncating", `{{AddInt 0.5 0.5 .Half}}`, "3", ""},
		{"AddInt of a float product", `{{AddInt 10 (MultiplyFloat 5 0.25)}}`, "11", ""},
		{"AddInt word", `{{AddInt .Word 1}}`, "", `argument 1: "abc" is not a number`},
		{"AddInt nil", `{{AddInt .Nil 1}}`, "", "missing value (nil)"},
		{"AddInt huge", `{{AddInt .Big 1}}`, "", "does not fit an integer"},
		{"AddInt none", `{{AddInt}}`, "", "want at least 1 arguments"},
		{"SubtractInt", `{{SubtractInt 5 7}}`, "-2", ""},
		{"MultiplyInt", `{{MultiplyInt 2 3 4}}`, "24", ""},
		{"MultiplyInt by a fraction", `{{MultiplyInt 15 0.5}}`, "7", ""},
		{"DivideInt", `{{DivideInt 7 2}}`, "3", ""},
		{"DivideInt truncates", `{{DivideInt -7 2}}`, "-3", ""},
		{"DivideInt of fractions", `{{DivideInt 7.5 2.5}}`, "3", ""},
		{"DivideInt exact negative", `{{DivideInt -8 2}}`, "-4", ""},
		{"DivideInt by zero", `{{DivideInt 1 0}}`, "", "t.yaml:1:3: at <DivideInt 1 0>: error calling DivideInt: division by zero"},
		{"AddFloat", `{{AddFloat 1.5 2}}`, "3.5", ""},
		{"SubtractFloat", `{{SubtractFloat 1 0.25}}`, "0.75", ""},
		{"MultiplyFloat", `{{MultiplyFloat 1.5 2}}`, "3", ""},
		{"DivideFloat", `{{DivideFloat 1 4}}`, "0.25", ""},
		{"DivideFloat by zero", `{{DivideFloat 1 0}}`, "", "division by zero"},
		{"DivideFloat word", `{{DivideFloat .Word 2}}`, "", `"abc" is not a number`},
		{"MaxInt", `{{MaxInt 3 9 2}}`, "9", ""},
		{"MinInt", `{{MinInt 3 9 2}}`, "2", ""},
		{"MinInt of fractions", `{{MinInt 3 .Half}}`, "2", ""},
		{"MaxInt empty", `{{MaxInt}}`, "", "want at least 1 arguments"},
		{"MaxFloat", `{{MaxFloat 1.5 0.25}}`, "1.5", ""},
		{"MinFloat", `{{MinFloat 1.5 0.25}}`, "0.25", ""},
		{"Mod", `{{Mod 7 3}}`, "1", ""},
		{"Mod negative", `{{Mod -7 3}}`, "-1", ""},
		{"Mod of fractions", `{{Mod 7.9 3.2}}`, "1", ""},
		{"Mod by zero", `{{Mod 1 0}}`, "", "modulo by zero"},
		{"Ceil", `{{Ceil 1.2}}`, "2", ""},
		{"Ceil of division", `{{DivideFloat 300 100 | Ceil}}`, "3", ""},
		{"Ceil word", `{{Ceil .Word}}`, "", "not a number"},
		{"IfThenElse true", `{{IfThenElse true "a" "b"}}`, "a", ""},
		{"IfThenElse false", `{{IfThenElse false "a" "b"}}`, "b", ""},
		{"IfThenElse zero", `{{IfThenElse 0 "a" "b"}}`, "b", ""},
		{"IfThenElse comparison", `{{IfThenElse (ge .X 5) "big" "small"}}`, "big", ""},
		{"Loop", `{{range $i := Loop 3}}{{$i}}{{end}}`, "012", ""},
		{"Loop zero", `{{range Loop 0}}x{{end}}`, "", ""},
		{"Loop negative", `{{Loop -1}}`, "", "length -1 is outside"},
		{"Loop too long", `{{Loop 100000000}}`, "", "length 100000000 is outside"},
		{"Seq is zeros", `{{range Seq 3}}{{.}}{{end}}`, "000", ""},
		{"Seq index", `{{range $i, $_ := Seq 3}}{{$i}}{{end}}`, "012", ""},
		{"Seq one argument", `{{Seq 1 2}}`, "", "wrong number of args for Seq"},
		{"Loop fraction", `{{range Loop 2.7}}x{{end}}`, "xx", ""},
		{"SliceOfZeros", `{{SliceOfZeros 3}}`, "[0 0 0]", ""},
		{"SliceOfZeros range", `{{range SliceOfZeros 2}}{{.}}{{end}}`, "00", ""},
		{"RandInt zero", `{{RandInt 0}}`, "0", ""},
		{"RandInt bad", `{{RandInt -1}}`, "", "want a bound of at least 0"},
		{"RandIntRange one value", `{{RandIntRange 5 5}}`, "5", ""},
		{"RandIntRange backwards", `{{RandIntRange 7 5}}`, "7", ""},
		{"RandData negative", `{{RandData -1}}`, "", "outside"},
		{"RandDataWithSeed repeats", `{{$a := RandDataWithSeed 12 42}}{{$b := RandDataWithSeed 12 42}}{{eq $a $b}}`, "true", ""},
		{"RandDataWithSeed seeds differ", `{{$a := RandDataWithSeed 12 1}}{{$b := RandDataWithSeed 12 2}}{{eq $a $b}}`, "false", ""},
		{"RandDataWithSeed name seed", `{{$a := RandDataWithSeed 12 "cm-1"}}{{$b := RandDataWithSeed 12 "cm-1"}}{{$c := RandDataWithSeed 12 "cm-2"}}{{eq $a $b}} {{eq $a $c}} {{len $a}}`, "true false 12", ""},
		{"StringSplit", `{{range StringSplit "a,b,c"}}[{{.}}]{{end}}`, "[a][b][c]", ""},
		{"StringSplit separator", `{{range StringSplit "a b" " "}}[{{.}}]{{end}}`, "[a][b]", ""},
		{"StringSplit empty", `{{len (StringSplit "")}}`, "0", ""},
		{"StringSplit not a string", `{{StringSplit .X}}`, "", "want a string, got 7 (int)"},
		{"Concat", `{{Concat "a" 1 "b" .X}}`, "a1b7", ""},
		{"Lowercase", `{{Lowercase "AbC-D"}}`, "abc-d", ""},
		{"YamlQuote", `{{YamlQuote "a: b" 2}}`, `"a: b"`, ""},
		{"YamlQuote negative indent", `{{YamlQuote "a" -1}}`, "", "indent must not be negative"},
		{"IncludeFile", `{{IncludeFile "inc.txt"}}`, "included {{.NotRendered}}\n", ""},
		{"IncludeFile missing", `{{IncludeFile "nope.txt"}}`, "", `cannot read "nope.txt" (looked at `},
		{"IncludeFile expands the environment", `{{IncludeFile "$KSCALE_TEST_SUB/leaf.txt"}}`, "leaf", ""},
		{"IncludeEmbedFile is not rendered", `{{IncludeEmbedFile "sub/emb.yaml"}}`, "v: {{.X}}", ""},
		{"IncludeEmbedFile slash path", `{{IncludeEmbedFile "/top.txt"}}`, "from top", ""},
		{"IncludeEmbedFile one argument", `{{IncludeEmbedFile "sub/emb.yaml" .A}}`, "", "wrong number of args for IncludeEmbedFile"},
		{"parse error", "a\n  {{AddInt 1", "", "t.yaml:2:3: unclosed action"},
		{"unknown function", `x: {{Nope 1}}`, "", `t.yaml:1:4: function "Nope" not defined`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := renderText(dir, tc.tmpl, data)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want it to contain %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestRandomFunctions(t *testing.T) {
	for range 50 {
		got, err := renderText(t.TempDir(), `{{RandInt 10}} {{RandIntRange 5 7}} {{RandIntRange -3 -1}} {{RandData 16}}`, nil)
		if err != nil {
			t.Fatal(err)
		}
		f := strings.Fields(got)
		if n, _ := strconv.Atoi(f[0]); n < 0 || n > 10 {
			t.Fatalf("RandInt 10 = %s", f[0])
		}
		if f[1] != "5" && f[1] != "6" && f[1] != "7" {
			t.Fatalf("RandIntRange 5 7 = %s", f[1])
		}
		if f[2] != "-3" && f[2] != "-2" && f[2] != "-1" {
			t.Fatalf("RandIntRange -3 -1 = %s", f[2])
		}
		if !regexp.MustCompile(`^[a-zA-Z0-9]{16}$`).MatchString(f[3]) {
			t.Fatalf("RandData 16 = %q", f[3])
		}
	}
}

// YamlQuote's output must read back as the same string at any position.
func TestYamlQuoteRoundTrip(t *testing.T) {
	for _, s := range []string{
		"plain", "a: b", "#comment", " leading space", "trailing ", `quote " and \ backslash`,
		"multi\nline\n", "tab\there", "ünïcödé ✓", "- dash", "{flow: map}", "", "null", "123", "yes", "\x00\x7f",
		strings.Repeat("long words ", 30),
	} {
		out, err := renderText(t.TempDir(), "top:\n  key: {{YamlQuote .S 2}}\n", map[string]any{"S": s})
		if err != nil {
			t.Fatal(err)
		}
		var v struct{ Top struct{ Key string } }
		if err := yaml.Unmarshal([]byte(out), &v); err != nil {
			t.Fatalf("%q rendered as %q: %v", s, out, err)
		}
		if v.Top.Key != s {
			t.Errorf("%q read back as %q (rendered %q)", s, v.Top.Key, out)
		}
	}
}

func TestNumberConversion(t *testing.T) {
	// Fractions truncate toward zero, as clusterloader2 converts.
	for _, v := range []any{int8(3), int16(3), int32(3), uint(3), uint8(3), uint16(3), uint32(3), uint64(3), float32(3), "3.0", " 3 ", 3.9, "3.5"} {
		if got, err := toInt(v); err != nil || got != 3 {
			t.Errorf("toInt(%T %v) = %d, %v", v, v, got, err)
		}
	}
	for _, v := range []any{uint64(1 << 63), struct{}{}, []int{1}, "x1", 1e300} {
		if _, err := toInt(v); err == nil {
			t.Errorf("toInt(%T %v) did not fail", v, v)
		}
	}
	if f, err := toFloat(uint8(2)); err != nil || f != 2 {
		t.Errorf("toFloat(uint8 2) = %v, %v", f, err)
	}
	if _, err := toFloat(true); err == nil {
		t.Error("toFloat(true) did not fail")
	}
}
