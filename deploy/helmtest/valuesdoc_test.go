package helmtest

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestDocumentedValues(t *testing.T) {
	t.Parallel()
	got, err := DocumentedValues([]byte(`# The file's own header.

# -- The name.
name: x
image:
  # -- The tag,
  # on two lines.
  tag: ""
  # A note that is not the value's doc.
  # -- Pulled when.
  pullPolicy: IfNotPresent
# -- A documented map is one value.
env:
  A: "1"
`))
	if err != nil {
		t.Fatal(err)
	}
	want := []Value{
		{Key: "name", Type: "string", Default: `"x"`, Description: "The name."},
		{Key: "image.tag", Type: "string", Default: `""`, Description: "The tag, on two lines."},
		{Key: "image.pullPolicy", Type: "string", Default: `"IfNotPresent"`, Description: "Pulled when."},
		{Key: "env", Type: "object", Default: `{"A":"1"}`, Description: "A documented map is one value."},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
}

func TestUndocumentedValueIsAnError(t *testing.T) {
	t.Parallel()
	_, err := DocumentedValues([]byte("image:\n  # just a note\n  tag: x\n  # -- ok\n  pull: y\nempty: {}\n"))
	if !errors.Is(err, ErrUndocumented) {
		t.Fatalf("err %v, want ErrUndocumented", err)
	}
	for _, key := range []string{"image.tag", "empty"} {
		if !strings.Contains(err.Error(), key) {
			t.Errorf("error %q does not name %s", err, key)
		}
	}
}
