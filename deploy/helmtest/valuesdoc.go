package helmtest

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// Value is one documented value of a chart: its dotted path, its YAML type,
// its default (compact JSON) and the text of its "# --" comment.
type Value struct {
	Key         string
	Type        string
	Default     string
	Description string
}

// ErrUndocumented is returned for a value with no "# --" comment above it
// (nor above any map that holds it).
var ErrUndocumented = errors.New("value without a \"# --\" comment")

// DocumentedValues lists the values of a values.yaml in file order, as
// helm-docs reads them: a key whose head comment holds a "# --" paragraph
// is documented by it (a documented map is one value, its contents its
// default); an undocumented map is walked into; an undocumented leaf is an
// error (every error is returned, joined).
func DocumentedValues(valuesYAML []byte) ([]Value, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(valuesYAML, &doc); err != nil {
		return nil, fmt.Errorf("values.yaml: %w", err)
	}
	if len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, errors.New("values.yaml: not a map")
	}
	var out []Value
	var errs []error
	var walk func(prefix string, m *yaml.Node)
	walk = func(prefix string, m *yaml.Node) {
		for i := 0; i+1 < len(m.Content); i += 2 {
			k, v := m.Content[i], m.Content[i+1]
			key := prefix + k.Value
			desc := docComment(k.HeadComment)
			switch {
			case desc != "":
				def, err := compactJSON(v)
				if err != nil {
					errs = append(errs, fmt.Errorf("%s: %w", key, err))
					continue
				}
				out = append(out, Value{Key: key, Type: yamlType(v), Default: def, Description: desc})
			case v.Kind == yaml.MappingNode && len(v.Content) > 0:
				walk(key+".", v)
			default:
				errs = append(errs, fmt.Errorf("%s (line %d): %w", key, k.Line, ErrUndocumented))
			}
		}
	}
	walk("", doc.Content[0])
	return out, errors.Join(errs...)
}

// docComment returns the last "# --" paragraph of a head comment: the text
// after "# --" and the comment lines that follow it.
func docComment(head string) string {
	lines := strings.Split(head, "\n")
	start := -1
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "# --") {
			start = i
		}
	}
	if start < 0 {
		return ""
	}
	parts := []string{strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(lines[start]), "# --"))}
	for _, l := range lines[start+1:] {
		l = strings.TrimSpace(l)
		if !strings.HasPrefix(l, "#") {
			break
		}
		parts = append(parts, strings.TrimSpace(strings.TrimPrefix(l, "#")))
	}
	return strings.Join(parts, " ")
}

func yamlType(v *yaml.Node) string {
	switch v.Kind {
	case yaml.MappingNode:
		return "object"
	case yaml.SequenceNode:
		return "list"
	}
	switch v.Tag {
	case "!!int":
		return "int"
	case "!!bool":
		return "bool"
	case "!!float":
		return "float"
	case "!!null":
		return "null"
	}
	return "string"
}

func compactJSON(v *yaml.Node) (string, error) {
	var x any
	if err := v.Decode(&x); err != nil {
		return "", err
	}
	b, err := json.Marshal(x)
	if err != nil {
		return "", err
	}
	return string(b), nil
}
