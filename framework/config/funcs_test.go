package config

import (
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// renderText renders text as the file t.yaml in dir.
func renderText(dir, text string, data any) (string, error) {
	r := &renderer{topAbs: dir, topDisp: dir}
	src := &source{disp: "t.yaml", abs: filepath.Join(dir, "t.yaml"), text: []byte(text)}
	if e := r.render(src, data); e != nil {
		return "", e
	}
	return string(src.rendered), nil
}

func TestTemplateFunctions(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"inc.txt":            "included {{.NotRendered}}\n",
		"sub/emb.yaml":       "v: {{.X}} {{IncludeFile \"leaf.txt\"}}",
		"sub/leaf.txt":       "leaf",
		"top.txt":            "from top",
		"sub/usetop.yaml":    `{{IncludeFile "/top.txt"}}`,
		"self.yaml":          `{{IncludeEmbedFile "self.yaml"}}`,
		"sub/missingkey.yml": "{{.Nope}}",
	})
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
		{"AddInt fraction", `{{AddInt 1 .Half}}`, "", "error calling AddInt: argument 2: 2.5 is not an integer"},
		{"AddInt word", `{{AddInt .Word 1}}`, "", `argument 1: "abc" is not an integer`},
		{"AddInt nil", `{{AddInt .Nil 1}}`, "", "missing value (nil)"},
		{"AddInt huge", `{{AddInt .Big 1}}`, "", "does not fit an integer"},
		{"AddInt none", `{{AddInt}}`, "", "want at least 1 arguments"},
		{"SubtractInt", `{{SubtractInt 5 7}}`, "-2", ""},
		{"MultiplyInt", `{{MultiplyInt 2 3 4}}`, "24", ""},
		{"DivideInt", `{{DivideInt 7 2}}`, "3", ""},
		{"DivideInt floors", `{{DivideInt -7 2}}`, "-4", ""},
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
		{"MaxInt empty", `{{MaxInt}}`, "", "want at least 1 arguments"},
		{"MaxFloat", `{{MaxFloat 1.5 0.25}}`, "1.5", ""},
		{"MinFloat", `{{MinFloat 1.5 0.25}}`, "0.25", ""},
		{"Mod", `{{Mod 7 3}}`, "1", ""},
		{"Mod negative", `{{Mod -7 3}}`, "2", ""},
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
		{"Seq last", `{{range Seq 3}}{{.}}{{end}}`, "123", ""},
		{"Seq first last", `{{range Seq 2 4}}{{.}}{{end}}`, "234", ""},
		{"Seq step", `{{range Seq 10 -3 1}}{{.}},{{end}}`, "10,7,4,1,", ""},
		{"Seq empty", `{{range Seq 3 1}}x{{end}}`, "", ""},
		{"Seq zero step", `{{Seq 1 0 5}}`, "", "step must not be zero"},
		{"Seq too many", `{{Seq 1 2 3 4}}`, "", "want 1 to 3 arguments"},
		{"SliceOfZeros", `{{SliceOfZeros 3}}`, "[0 0 0]", ""},
		{"SliceOfZeros range", `{{range SliceOfZeros 2}}{{.}}{{end}}`, "00", ""},
		{"RandInt bad", `{{RandInt 0}}`, "", "want a positive bound"},
		{"RandIntRange empty", `{{RandIntRange 5 5}}`, "", "empty range [5, 5)"},
		{"RandData negative", `{{RandData -1}}`, "", "outside"},
		{"RandDataWithSeed repeats", `{{$a := RandDataWithSeed 12 42}}{{$b := RandDataWithSeed 12 42}}{{eq $a $b}}`, "true", ""},
		{"RandDataWithSeed seeds differ", `{{$a := RandDataWithSeed 12 1}}{{$b := RandDataWithSeed 12 2}}{{eq $a $b}}`, "false", ""},
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
		{"IncludeEmbedFile", `{{IncludeEmbedFile "sub/emb.yaml"}}`, "v: 7 leaf", ""},
		{"IncludeEmbedFile with data", `{{IncludeEmbedFile "sub/emb.yaml" .A}}`, "", `map has no entry for key "X"`},
		{"IncludeEmbedFile slash path", `{{IncludeEmbedFile "sub/usetop.yaml"}}`, "from top", ""},
		{"IncludeEmbedFile error position", `{{IncludeEmbedFile "sub/missingkey.yml"}}`, "", `sub/missingkey.yml:1:3: at <.Nope>: map has no entry for key "Nope"`},
		{"IncludeEmbedFile cycle", `{{IncludeEmbedFile "self.yaml"}}`, "", "include cycle: self.yaml -> self.yaml"},
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
		if n, _ := strconv.Atoi(f[0]); n < 0 || n >= 10 {
			t.Fatalf("RandInt 10 = %s", f[0])
		}
		if f[1] != "5" && f[1] != "6" {
			t.Fatalf("RandIntRange 5 7 = %s", f[1])
		}
		if f[2] != "-3" && f[2] != "-2" {
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
	for _, v := range []any{int8(3), int16(3), int32(3), uint(3), uint8(3), uint16(3), uint32(3), uint64(3), float32(3), "3.0", " 3 "} {
		if got, err := toInt(v); err != nil || got != 3 {
			t.Errorf("toInt(%T %v) = %d, %v", v, v, got, err)
		}
	}
	for _, v := range []any{uint64(1 << 63), struct{}{}, []int{1}, "1.5"} {
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
