package wire

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestProtocolDoc_NamesEveryFrameTypeAndErrorCode keeps docs/protocol.md
// true: every frame type (Type…) and error code (Code…) this package
// defines must be named there, so a new one cannot ship undocumented.
func TestProtocolDoc_NamesEveryFrameTypeAndErrorCode(t *testing.T) {
	doc, err := os.ReadFile("../../docs/protocol.md")
	if err != nil {
		t.Fatal(err)
	}
	consts := stringConsts(t, "Type", "Code")
	if len(consts) < 30 {
		t.Fatalf("found only %d frame types and error codes: the parse missed them", len(consts))
	}
	for name, v := range consts {
		if !strings.Contains(string(doc), "`"+v+"`") && !strings.Contains(string(doc), `"`+v+`"`) {
			t.Errorf("%s (%q) is not in docs/protocol.md", name, v)
		}
	}
}

// stringConsts returns the string constants of this package's non-test
// files whose names start with one of prefixes, by name.
func stringConsts(t *testing.T, prefixes ...string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	named := func(n string) bool {
		for _, p := range prefixes {
			if strings.HasPrefix(n, p) {
				return true
			}
		}
		return false
	}
	out := map[string]string{}
	fset := token.NewFileSet()
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, e.Name(), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			vs, ok := n.(*ast.ValueSpec)
			if !ok {
				return true
			}
			for i, name := range vs.Names {
				if i >= len(vs.Values) || !named(name.Name) {
					continue
				}
				if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
					out[name.Name], _ = strconv.Unquote(lit.Value)
				}
			}
			return false
		})
	}
	return out
}
