// The Go peers of the routing benchmarks: gin, httprouter, echo, chi and the standard
// library's ServeMux, on the tables and requests of bench/tables/, in the same run as the
// C++ suites (bench/run). Each router is driven through its ServeHTTP with a discarding
// writer, the call a Go server makes per request, so its figure is its whole dispatch:
// the match, the parameter extraction and its own 404/405/redirect answers.
//
// Patterns are translated from waypoint's syntax ({id} -> :id or {id}, {rest...} -> *rest
// or *, {$} -> a trailing '/'); a pattern a router cannot express (a host, and for the
// ServeMux of Go 1.19 any wildcard or {$}) is left out and every request that needs it is
// marked unsupported, and a pattern the router refuses (httprouter and gin panic on some
// literal/parameter mixes) is reported as refused. Before timing, each request's outcome
// is compared with the expectation written in its .requests file.
//
// Timing: the thread's CPU time around a loop of calls (the C++ suites' clock), with the
// goroutine locked to its thread and GOMAXPROCS=1. The garbage collector's background work
// runs on other threads and is not in the figure; allocations per call are reported beside
// it so that cost is visible. Repetitions of every benchmark are interleaved in a shuffled
// order, and the median and the range are written, one JSON object per line.
//
//	go run bench/go/main.go -tables bench/tables -reps 5 -min-time 0.05 > go.jsonl
//	go run bench/go/main.go -tables bench/tables -check        # agreement only, no timing
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"math/rand"
	"net/http"
	"os"
	"runtime"
	"sort"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"./table"
	"github.com/gin-gonic/gin"
	"github.com/go-chi/chi"
	"github.com/julienschmidt/httprouter"
	"github.com/labstack/echo"
)

// ---- tables -----------------------------------------------------------------------------

type route = table.Route

type request struct {
	name, method, target, host, expect string
}

func contentLines(path string) []string {
	lines, err := table.ContentLines(path)
	if err != nil {
		fail("%v", err)
	}
	return lines
}

func loadRoutes(dir, name string) []route {
	routes, err := table.LoadRoutes(dir + "/" + name + ".routes")
	if err != nil {
		fail("%v", err)
	}
	return routes
}

func loadRequests(dir, table string) []request {
	var out []request
	for _, line := range contentLines(dir + "/" + table + ".requests") {
		var r request
		if i := strings.Index(line, " # expect: "); i >= 0 {
			r.expect = strings.TrimSpace(line[i+len(" # expect: "):])
			line = line[:i]
		}
		f := strings.Fields(line)
		if len(f) < 3 || len(f) > 4 {
			fail("%s.requests: want NAME METHOD TARGET [HOST]: %q", table, line)
		}
		r.name, r.method, r.target = f[0], f[1], f[2]
		if len(f) == 4 {
			r.host = f[3]
		}
		out = append(out, r)
	}
	return out
}

// ---- the routers --------------------------------------------------------------------------

// The route index a handler records; -1 before a call.
var hit = -1

type syntax = table.Syntax

var colon = table.Colon

func translate(r route, s syntax) (string, string) { return table.Translate(r, s) }

var allMethods = []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"}

func methodsOf(r route) []string {
	if r.Method == "" {
		return allMethods
	}
	return []string{r.Method}
}

// A router under test: build registers a table and reports the routes it left out.
type peer struct {
	name  string
	build func(routes []route) (http.Handler, map[int]string)
}

// register calls add for every route, turning a panic into a refusal.
func register(routes []route, s syntax, add func(i int, method, path string)) map[int]string {
	left := map[int]string{}
	for i, r := range routes {
		path, why := translate(r, s)
		if why != "" {
			left[i] = "cannot express: " + why
			continue
		}
		func() {
			defer func() {
				if p := recover(); p != nil {
					left[i] = "refused: " + strings.SplitN(fmt.Sprint(p), "\n", 2)[0]
				}
			}()
			for _, m := range methodsOf(r) {
				add(i, m, path)
			}
		}()
	}
	return left
}

var peers = []peer{
	{"gin", func(routes []route) (http.Handler, map[int]string) {
		e := gin.New()
		// Without it gin answers 404 where the others answer 405.
		e.HandleMethodNotAllowed = true
		left := register(routes, colon, func(i int, m, p string) {
			e.Handle(m, p, func(*gin.Context) { hit = i })
		})
		return e, left
	}},
	{"httprouter", func(routes []route) (http.Handler, map[int]string) {
		h := httprouter.New()
		left := register(routes, colon, func(i int, m, p string) {
			h.Handle(m, p, func(http.ResponseWriter, *http.Request, httprouter.Params) { hit = i })
		})
		return h, left
	}},
	{"echo", func(routes []route) (http.Handler, map[int]string) {
		e := echo.New()
		s := syntax{Param: colon.Param, Rest: func(string) string { return "*" }, Wildcard: true}
		left := register(routes, s, func(i int, m, p string) {
			e.Add(m, p, func(echo.Context) error { hit = i; return nil })
		})
		return e, left
	}},
	{"chi", func(routes []route) (http.Handler, map[int]string) {
		c := chi.NewRouter()
		s := syntax{Param: func(n string) string { return "{" + n + "}" },
			Rest: func(string) string { return "*" }, Wildcard: true}
		left := register(routes, s, func(i int, m, p string) {
			c.MethodFunc(m, p, func(http.ResponseWriter, *http.Request) { hit = i })
		})
		return c, left
	}},
	{"servemux", func(routes []route) (http.Handler, map[int]string) {
		// Go 1.19's ServeMux knows paths only: the methods of one path share a handler
		// that switches on the method, as a handler written for it does.
		mux := http.NewServeMux()
		type entry struct {
			methods []string
			routes  []int
		}
		byPath := map[string]*entry{}
		var order []string
		left := register(routes, syntax{}, func(i int, m, p string) {
			e := byPath[p]
			if e == nil {
				e = &entry{}
				byPath[p] = e
				order = append(order, p)
			}
			if n := len(e.routes); n > 0 && e.routes[n-1] == i {
				return // a method-less route, added for its first method already
			}
			e.methods = append(e.methods, routes[i].Method)
			e.routes = append(e.routes, i)
		})
		for _, p := range order {
			e := byPath[p]
			mux.HandleFunc(p, func(w http.ResponseWriter, r *http.Request) {
				for k, m := range e.methods {
					if m == r.Method || m == "" || m == "GET" && r.Method == "HEAD" {
						hit = e.routes[k]
						return
					}
				}
				w.WriteHeader(http.StatusMethodNotAllowed)
			})
		}
		return mux, left
	}},
}

// ---- one call ----------------------------------------------------------------------------

// A ResponseWriter that keeps the status and the Location and drops the body.
type discard struct {
	header http.Header
	status int
}

func (d *discard) Header() http.Header         { return d.header }
func (d *discard) Write(b []byte) (int, error) { return len(b), nil }
func (d *discard) WriteHeader(status int)      { d.status = status }

func newRequest(r request) *http.Request {
	req, err := http.NewRequest(r.method, r.target, nil)
	if err != nil {
		fail("request %s: %v", r.name, err)
	}
	req.RequestURI = r.target
	if r.host != "" {
		req.Host = r.host
	}
	return req
}

// outcome says what h answered, in the words of a .requests expectation.
func outcome(h http.Handler, r request, routes []route) string {
	hit = -1
	w := &discard{header: http.Header{}, status: 200}
	h.ServeHTTP(w, newRequest(r))
	switch {
	case hit >= 0:
		return "match " + routes[hit].Text
	case w.status == 301 || w.status == 302 || w.status == 307 || w.status == 308:
		return "redirect " + w.header.Get("Location")
	default:
		return fmt.Sprint(w.status)
	}
}

// agrees compares an outcome with an expectation; a 405's Allow list is not compared
// (the Go routers spell it differently), only its status.
func agrees(got, expect string) bool {
	if strings.HasPrefix(expect, "405") {
		return got == "405"
	}
	return got == expect
}

// ---- timing ------------------------------------------------------------------------------

func threadCPU() time.Duration {
	var ts syscall.Timespec
	const clockThreadCPUTime = 3 // CLOCK_THREAD_CPUTIME_ID
	syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTime, uintptr(unsafe.Pointer(&ts)), 0)
	return time.Duration(ts.Nano())
}

// measure runs body in growing batches until minTime of CPU time has passed; it returns
// nanoseconds and allocations per call.
func measure(body func(), minTime time.Duration) (float64, float64) {
	body() // warm-up
	n := 1
	for {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		start := threadCPU()
		for i := 0; i < n; i++ {
			body()
		}
		elapsed := threadCPU() - start
		runtime.ReadMemStats(&after)
		if elapsed >= minTime || n >= 1<<30 {
			return float64(elapsed.Nanoseconds()) / float64(n),
				float64(after.Mallocs-before.Mallocs) / float64(n)
		}
		grow := 2 * n
		if elapsed > 0 {
			grow = int(float64(n) * 1.2 * float64(minTime) / float64(elapsed))
		}
		if grow < 2*n && elapsed < minTime/2 {
			grow = 2 * n
		}
		if grow <= n {
			grow = n + 1
		}
		n = grow
	}
}

// ---- the run -----------------------------------------------------------------------------

type benchmark struct {
	kind, table, request, router string
	routes                       int
	note                         string // "" or why the figure is not comparable
	body                         func()
	perItem                      float64 // divisor: 1 for a match, routes for a registration
	ns, allocs                   []float64
}

type line struct {
	Kind     string  `json:"kind"`
	Table    string  `json:"table"`
	Request  string  `json:"request,omitempty"`
	Router   string  `json:"router"`
	Routes   int     `json:"routes"`
	Left     int     `json:"left_out,omitempty"`
	Note     string  `json:"note,omitempty"`
	Ns       float64 `json:"ns,omitempty"`
	NsMin    float64 `json:"ns_min,omitempty"`
	NsMax    float64 `json:"ns_max,omitempty"`
	Allocs   float64 `json:"allocs,omitempty"`
	Reps     int     `json:"repetitions,omitempty"`
	Outcome  string  `json:"outcome,omitempty"`
	Expected string  `json:"expected,omitempty"`
}

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func minMax(v []float64) (float64, float64) {
	lo, hi := v[0], v[0]
	for _, x := range v {
		if x < lo {
			lo = x
		}
		if x > hi {
			hi = x
		}
	}
	return lo, hi
}

var out = json.NewEncoder(os.Stdout)

func emit(l line) {
	if err := out.Encode(l); err != nil {
		fail("%v", err)
	}
}

func fail(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, "bench/go: "+format+"\n", args...)
	os.Exit(1)
}

func main() {
	dir := flag.String("tables", "bench/tables", "the directory of .routes and .requests files")
	matchTables := flag.String("match", "gateway,mix1000,github,parse,gplus,static",
		"tables whose requests are timed")
	registerTables := flag.String("register", "github,gateway,mix1000,unique10k",
		"tables whose registration is timed")
	reps := flag.Int("reps", 5, "repetitions of each benchmark, interleaved")
	minTime := flag.Float64("min-time", 0.05, "least CPU seconds of one repetition")
	check := flag.Bool("check", false, "compare outcomes with the expectations only; exit 1 on a difference waypoint's own suite would not accept")
	flag.Parse()
	runtime.GOMAXPROCS(1)
	runtime.LockOSThread()
	gin.SetMode(gin.ReleaseMode)

	var benches []*benchmark
	disagreements := 0
	for _, table := range strings.Split(*matchTables, ",") {
		routes := loadRoutes(*dir, table)
		requests := loadRequests(*dir, table)
		for _, p := range peers {
			h, left := p.build(routes)
			index := map[string]int{}
			for i, r := range routes {
				index["match "+r.Text] = i
			}
			for _, r := range requests {
				b := &benchmark{kind: "match", table: table, request: r.name, router: p.name,
					routes: len(routes) - len(left), perItem: 1}
				if i, ok := index[r.expect]; ok {
					if why, gone := left[i]; gone {
						b.note = why
					}
				}
				got := outcome(h, r, routes)
				if b.note == "" && !agrees(got, r.expect) {
					b.note = "disagrees"
					disagreements++
				}
				if *check {
					emit(line{Kind: "check", Table: table, Request: r.name, Router: p.name,
						Routes: b.routes, Left: len(left), Note: b.note, Outcome: got, Expected: r.expect})
					continue
				}
				if strings.HasPrefix(b.note, "cannot express") || strings.HasPrefix(b.note, "refused") {
					emit(line{Kind: "match", Table: table, Request: r.name, Router: p.name,
						Routes: b.routes, Left: len(left), Note: b.note, Outcome: got, Expected: r.expect})
					continue
				}
				req := newRequest(r)
				w := &discard{header: http.Header{}}
				handler := h
				b.body = func() { handler.ServeHTTP(w, req) }
				benches = append(benches, b)
				_ = got
			}
		}
	}
	if !*check {
		for _, table := range strings.Split(*registerTables, ",") {
			routes := loadRoutes(*dir, table)
			for _, p := range peers {
				if p.name == "servemux" {
					continue // not a tree router: nothing to compare registration with
				}
				build := p.build
				_, left := build(routes)
				b := &benchmark{kind: "register", table: table, router: p.name,
					routes: len(routes) - len(left), perItem: float64(len(routes) - len(left))}
				if len(left) > 0 {
					b.note = fmt.Sprintf("left out %d routes", len(left))
				}
				b.body = func() { build(routes) }
				benches = append(benches, b)
			}
		}
	}
	if *check {
		if disagreements > 0 {
			fmt.Fprintf(os.Stderr, "bench/go: %d requests answered unlike their expectation (see note)\n", disagreements)
		}
		return
	}
	order := make([]int, 0, len(benches)**reps)
	for rep := 0; rep < *reps; rep++ {
		for i := range benches {
			order = append(order, i)
		}
	}
	rng := rand.New(rand.NewSource(19))
	rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	for _, i := range order {
		b := benches[i]
		ns, allocs := measure(b.body, time.Duration(*minTime*float64(time.Second)))
		b.ns = append(b.ns, ns/b.perItem)
		b.allocs = append(b.allocs, allocs/b.perItem)
	}
	for _, b := range benches {
		lo, hi := minMax(b.ns)
		emit(line{Kind: b.kind, Table: b.table, Request: b.request, Router: b.router,
			Routes: b.routes, Note: b.note, Ns: median(b.ns), NsMin: lo, NsMax: hi,
			Allocs: median(b.allocs), Reps: len(b.ns)})
	}
}
