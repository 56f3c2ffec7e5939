// Package table reads waypoint's route tables (bench/tables/*.routes) and spells their
// patterns in a Go router's syntax. The routing benchmark (bench/go/main.go) and the
// whole-HTTP peer servers (bench/go/peer) share it, so both register the same routes the
// same way.
package table

import (
	"bufio"
	"fmt"
	"os"
	"strings"
)

// Route is one line of a .routes file.
type Route struct {
	Text   string
	Method string // "" for every method
	Host   string
	Path   string // waypoint syntax
}

// ContentLines returns the file's lines that are neither blank nor comments, trimmed.
func ContentLines(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	s := bufio.NewScanner(f)
	s.Buffer(make([]byte, 1<<20), 1<<20)
	for s.Scan() {
		line := strings.TrimSpace(s.Text())
		if line != "" && !strings.HasPrefix(line, "#") {
			out = append(out, line)
		}
	}
	return out, s.Err()
}

// LoadRoutes reads a .routes file: `[METHOD ]HOST?/PATH` per line.
func LoadRoutes(path string) ([]Route, error) {
	lines, err := ContentLines(path)
	if err != nil {
		return nil, err
	}
	var out []Route
	for _, line := range lines {
		r := Route{Text: line}
		rest := line
		if i := strings.IndexAny(line, " \t"); i >= 0 {
			r.Method = line[:i]
			rest = strings.TrimLeft(line[i:], " \t")
		}
		slash := strings.IndexByte(rest, '/')
		if slash < 0 {
			return nil, fmt.Errorf("%s: no path in %q", path, line)
		}
		r.Host, r.Path = rest[:slash], rest[slash:]
		out = append(out, r)
	}
	return out, nil
}

// WildcardNames returns the names of r's wildcards in order ({id} -> "id",
// {rest...} -> "rest"), the names waypoint's echo answer lists its values under.
func WildcardNames(r Route) []string {
	var names []string
	for _, seg := range strings.Split(r.Path[1:], "/") {
		if strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "}") && seg != "{$}" {
			names = append(names, strings.TrimSuffix(seg[1:len(seg)-1], "..."))
		}
	}
	return names
}

// Syntax is how a router spells wildcards.
type Syntax struct {
	Param    func(name string) string // one segment
	Rest     func(name string) string // the rest of the path; name may be ""
	Wildcard bool                     // false: literal patterns only (ServeMux)
}

// Colon is gin's and httprouter's syntax: :id and *rest.
var Colon = Syntax{
	Param:    func(n string) string { return ":" + n },
	Rest:     func(n string) string { return "*" + orDefault(n, "rest") },
	Wildcard: true,
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// Translate returns the router's spelling of r's path, or why it cannot be expressed.
func Translate(r Route, s Syntax) (string, string) {
	if r.Host != "" {
		return "", "routes on the host"
	}
	segments := strings.Split(r.Path[1:], "/")
	var b strings.Builder
	for i, seg := range segments {
		last := i == len(segments)-1
		b.WriteByte('/')
		switch {
		case seg == "{$}":
			if !s.Wildcard {
				return "", "{$} (exact trailing slash)"
			}
		case last && seg == "":
			if s.Wildcard {
				b.WriteString(s.Rest(""))
			}
		case strings.HasSuffix(seg, "...}"):
			if !s.Wildcard {
				b.WriteString("") // ServeMux: "/a/" is the subtree
			} else {
				b.WriteString(s.Rest(seg[1 : len(seg)-4]))
			}
		case strings.HasPrefix(seg, "{"):
			if !s.Wildcard {
				return "", "a {name} wildcard"
			}
			b.WriteString(s.Param(seg[1 : len(seg)-1]))
		default:
			b.WriteString(seg)
		}
	}
	return b.String(), ""
}
