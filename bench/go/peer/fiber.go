package main

// fasthttp (the transport fiber runs on) behind a matcher built the way fiber builds its
// tree and the fiber fork orders it (docs: the reference write-up on the fork, §5 there):
// routes are kept per method; within a method, bucketed by the first three bytes of their
// leading literal (a route that starts with a wildcard, or whose literal is shorter, goes
// to the "" bucket, which is appended to every other bucket); each bucket is ordered most
// specific first (a literal segment before a parameter before a rest wildcard, at the
// first segment where two routes differ) and a request scans its bucket linearly, trying
// each route in turn. Values go to a fixed array, as fiber's context keeps them, so a
// match allocates nothing. Unlike fiber's defaults, matching is case-sensitive and strict
// about a trailing slash, as waypoint's router is.

import (
	"net"
	"sort"
	"strings"
	"unsafe"

	"../table"
	"github.com/valyala/fasthttp"
)

const (
	partLiteral = iota // text that must be there, slashes included
	partParam          // up to the next '/'
	partRest           // the rest of the path
)

type part struct {
	kind int
	text string
}

const maxValues = 30 // fiber's maxParams

type fiberRoute struct {
	text    string
	method  string
	parts   []part
	static  bool // one literal part: compared whole
	names   []string
	kinds   []int // one per '/'-segment, for the ordering
	handler func(ctx *fasthttp.RequestCtx, values *[maxValues]string)
}

var methodNames = []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"}

func methodIndex(m string) int {
	switch m {
	case "GET":
		return 0
	case "HEAD":
		return 1
	case "POST":
		return 2
	case "PUT":
		return 3
	case "PATCH":
		return 4
	case "DELETE":
		return 5
	case "OPTIONS":
		return 6
	}
	return -1
}

// parseParts splits a waypoint path into literal runs and wildcards, as fiber's route
// parser splits "/a/:id/b" into "/a/", :id, "/b".
func parseParts(path string) ([]part, []int) {
	var parts []part
	var kinds []int
	var lit strings.Builder
	segments := strings.Split(path[1:], "/")
	for _, seg := range segments {
		lit.WriteByte('/')
		kind := partLiteral
		switch {
		case strings.HasSuffix(seg, "...}"):
			kind = partRest
		case strings.HasPrefix(seg, "{") && seg != "{$}":
			kind = partParam
		}
		kinds = append(kinds, kind)
		if kind == partLiteral {
			if seg != "{$}" {
				lit.WriteString(seg)
			}
			continue
		}
		parts = append(parts, part{partLiteral, lit.String()})
		lit.Reset()
		parts = append(parts, part{kind: kind})
	}
	if lit.Len() > 0 {
		parts = append(parts, part{partLiteral, lit.String()})
	}
	return parts, kinds
}

// match reports whether path is r's, the values written to values.
func (r *fiberRoute) match(path string, values *[maxValues]string) bool {
	if r.static {
		return path == r.parts[0].text
	}
	n := 0
	for k, p := range r.parts {
		switch p.kind {
		case partLiteral:
			if !strings.HasPrefix(path, p.text) {
				return false
			}
			path = path[len(p.text):]
		case partParam:
			end := strings.IndexByte(path, '/')
			if end < 0 {
				end = len(path)
			}
			if end == 0 {
				return false
			}
			values[n], n = path[:end], n+1
			path = path[end:]
		case partRest:
			if k != len(r.parts)-1 {
				return false // not in the tables; a rest wildcard ends a pattern
			}
			values[n], n = path, n+1
			path = ""
		}
	}
	return path == ""
}

// moreSpecific orders two routes of one bucket: at the first segment where their kinds
// differ, the literal before the parameter before the rest wildcard.
func moreSpecific(a, b *fiberRoute) bool {
	for i := 0; i < len(a.kinds) && i < len(b.kinds); i++ {
		if a.kinds[i] != b.kinds[i] {
			return a.kinds[i] < b.kinds[i]
		}
	}
	return len(a.kinds) > len(b.kinds)
}

type fiberMatcher struct {
	trees [7]map[string][]*fiberRoute
}

func newFiberMatcher(routes []*fiberRoute) *fiberMatcher {
	m := &fiberMatcher{}
	for i := range m.trees {
		m.trees[i] = map[string][]*fiberRoute{}
	}
	for _, r := range routes {
		prefix := ""
		if first := r.parts[0]; first.kind == partLiteral && len(first.text) >= 3 {
			prefix = first.text[:3]
		}
		methods := []string{r.method}
		if r.method == "" {
			methods = methodNames
		}
		for _, name := range methods {
			t := m.trees[methodIndex(name)]
			t[prefix] = append(t[prefix], r)
		}
	}
	for _, t := range m.trees {
		for prefix, bucket := range t {
			if prefix != "" {
				bucket = append(bucket, t[""]...)
			}
			sort.SliceStable(bucket, func(i, j int) bool { return moreSpecific(bucket[i], bucket[j]) })
			t[prefix] = bucket
		}
	}
	return m
}

func (m *fiberMatcher) find(method, path string, values *[maxValues]string) *fiberRoute {
	i := methodIndex(method)
	if i < 0 {
		return nil
	}
	prefix := ""
	if len(path) >= 3 {
		prefix = path[:3]
	}
	tree, ok := m.trees[i][prefix]
	if !ok {
		tree = m.trees[i][""]
	}
	for _, r := range tree {
		if r.match(path, values) {
			return r
		}
	}
	return nil
}

func fasthttpServer(routes []table.Route, typed bool, ln net.Listener) func() error {
	var all []*fiberRoute
	for _, tr := range routes {
		if tr.Host != "" {
			fail("the fiber-shaped matcher cannot serve %q: routes on the host", tr.Text)
		}
		parts, kinds := parseParts(tr.Path)
		r := &fiberRoute{text: tr.Text, method: tr.Method, parts: parts, kinds: kinds,
			static: len(parts) == 1 && parts[0].kind == partLiteral, names: table.WildcardNames(tr)}
		r.handler = fasthttpHandler(r, typed)
		all = append(all, r)
	}
	m := newFiberMatcher(all)
	handler := func(ctx *fasthttp.RequestCtx) {
		var values [maxValues]string
		r := m.find(b2s(ctx.Method()), b2s(ctx.URI().PathOriginal()), &values)
		if r == nil {
			ctx.SetStatusCode(fasthttp.StatusNotFound)
			return
		}
		r.handler(ctx, &values)
	}
	s := &fasthttp.Server{Handler: handler}
	return func() error { return s.Serve(ln) }
}

func fasthttpHandler(r *fiberRoute, typed bool) func(*fasthttp.RequestCtx, *[maxValues]string) {
	if typed && isWrite(r.method) {
		return func(ctx *fasthttp.RequestCtx, _ *[maxValues]string) {
			status, out := typedWrite(r.method, r.text, b2s(ctx.Request.Header.ContentType()),
				ctx.PostBody())
			ctx.SetStatusCode(status)
			ctx.SetContentType("application/json")
			ctx.SetBody(out)
		}
	}
	return func(ctx *fasthttp.RequestCtx, values *[maxValues]string) {
		ctx.SetContentType("application/json")
		ctx.SetBody(echoBody(r.text, r.names, func(i int) string { return values[i] }))
	}
}

// b2s views fasthttp's bytes as a string without copying them, as fiber does
// (utils.UnsafeString): valid while the request is being served, which is all it is used for.
func b2s(b []byte) string {
	return *(*string)(unsafe.Pointer(&b))
}
