package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"
)

// launcherName prefixes the launcher's own lines.
const launcherName = "pulka-local"

// console writes the lines of every process to one writer, each prefixed
// with the name of the process it came from, whole lines at a time so that
// processes writing at once never mix within a line.
type console struct {
	mu    sync.Mutex
	w     io.Writer
	width int
	raw   bool
	local *time.Location
}

// newConsole writes to w; width is the longest process name (for the
// column). With raw, JSON log lines are printed as they are.
func newConsole(w io.Writer, width int, raw bool) *console {
	return &console{w: w, width: max(width, len(launcherName)), raw: raw, local: time.Local}
}

// Printf writes one of the launcher's own lines.
func (c *console) Printf(format string, args ...any) {
	c.line(launcherName, fmt.Sprintf(format, args...))
}

func (c *console) line(name, text string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	// A console that cannot be written to (a closed terminal) must not
	// stop the services; there is nowhere to report it anyway.
	_, _ = fmt.Fprintf(c.w, "%-*s | %s\n", c.width, name, text)
}

// pump copies r line by line to the console under name until r ends.
// Lines of any length are kept whole.
func (c *console) pump(name string, r io.Reader) {
	br := bufio.NewReader(r)
	for {
		s, err := br.ReadString('\n')
		if s = strings.TrimRight(s, "\r\n"); s != "" {
			if !c.raw {
				s = humanLog(s, c.local)
			}
			c.line(name, s)
		}
		if err != nil {
			return
		}
	}
}

// humanLog turns one of the services' JSON log lines
//
//	{"time":"…","level":"INFO","msg":"started","service":"lobby","admin_addr":"…"}
//
// into "12:04:05.120 INFO  started admin_addr=…": the time of day, the
// level, the message, then the other attributes in their order. The
// service attribute is dropped (the prefix names the process). Anything
// that is not such a line is returned unchanged.
func humanLog(line string, loc *time.Location) string {
	if !strings.HasPrefix(line, "{") {
		return line
	}
	dec := json.NewDecoder(strings.NewReader(line))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return line
	}
	var when, level, msg string
	var attrs []string
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return line
		}
		key, _ := kt.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return line
		}
		val := attrValue(raw)
		switch key {
		case "time":
			when = val
			if t, err := time.Parse(time.RFC3339Nano, val); err == nil {
				when = t.In(loc).Format("15:04:05.000")
			}
		case "level":
			level = val
		case "msg":
			msg = val
		case "service":
		default:
			if raw[0] == '"' && (val == "" || strings.ContainsAny(val, " \t\"=")) {
				val = strconv.Quote(val)
			}
			attrs = append(attrs, key+"="+val)
		}
	}
	// The object must be the whole line; otherwise show it as it is.
	if t, err := dec.Token(); err != nil || t != json.Delim('}') {
		return line
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return line
	}
	var b strings.Builder
	if when != "" {
		b.WriteString(when)
		b.WriteByte(' ')
	}
	if level != "" {
		fmt.Fprintf(&b, "%-5s ", level)
	}
	b.WriteString(msg)
	for _, a := range attrs {
		b.WriteByte(' ')
		b.WriteString(a)
	}
	return b.String()
}

// attrValue is a JSON value as text: a string without its quotes, anything
// else (numbers, booleans, objects) compact as in the JSON.
func attrValue(raw json.RawMessage) string {
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err == nil {
			return s
		}
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return string(raw)
	}
	return buf.String()
}
