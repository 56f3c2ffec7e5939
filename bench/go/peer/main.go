// The Go peers of the whole-HTTP benchmarks (bench/load/peers, BENCHMARKS.md §21): one
// program that serves a waypoint route table with gin (on net/http) or with fasthttp
// behind a matcher shaped like the fiber fork's, answering as the example gateway does:
// GET and DELETE routes with the echo body {"route":...,"values":{...}}, POST, PUT and
// PATCH routes (with --typed-writes) as the gateway's typed record routes
// (examples/records.hpp): the 8-field JSON body decoded with encoding/json, checked
// against the record's rules, and the 5-field answer encoded with encoding/json.
//
// It takes the gateway's command line where the harness needs it and prints a line like
// the gateway's first, so bench/load/harness.py starts it as it starts a gateway:
//
//	waypoint-peer-go --server gin|fasthttp --routes FILE [--typed-writes]
//	                 [--address A] [--port P] [--threads N]
//
// --threads sets GOMAXPROCS (the harness passes 1, as the gateway gets one server thread).
package main

import (
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"syscall"

	"../table"
)

func fail(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, "waypoint-peer-go: "+format+"\n", args...)
	os.Exit(2)
}

func main() {
	server := flag.String("server", "", "gin or fasthttp")
	routesFile := flag.String("routes", "", "the route table (waypoint syntax)")
	typed := flag.Bool("typed-writes", false, "POST, PUT and PATCH routes decode, check and answer a record")
	address := flag.String("address", "127.0.0.1", "address to listen on")
	port := flag.Int("port", 8080, "port; 0 picks a free one")
	threads := flag.Int("threads", 1, "GOMAXPROCS")
	flag.Parse()
	if *threads < 1 {
		fail("--threads must be at least 1")
	}
	runtime.GOMAXPROCS(*threads)
	routes, err := table.LoadRoutes(*routesFile)
	if err != nil || len(routes) == 0 {
		fail("--routes: %v (%d routes)", err, len(routes))
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(*address, strconv.Itoa(*port)))
	if err != nil {
		fail("%v", err)
	}
	var serve func() error
	switch *server {
	case "gin":
		serve = ginServer(routes, *typed, ln)
	case "fasthttp":
		serve = fasthttpServer(routes, *typed, ln)
	default:
		fail("--server must be gin or fasthttp")
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		<-stop
		os.Exit(0)
	}()
	fmt.Printf("waypoint-peer-%s: %d routes on http://%s\n", *server, len(routes), ln.Addr())
	if err := serve(); err != nil {
		fail("%v", err)
	}
}

// An answer's parts that do not depend on the server: the echo body and the typed write.

// appendJSONString appends s as a JSON string.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&15])
		default:
			b = append(b, c)
		}
	}
	return append(b, '"')
}

// echoBody is the gateway's echo answer: the pattern as written and its values by name.
func echoBody(text string, names []string, value func(i int) string) []byte {
	b := make([]byte, 0, 128)
	b = append(b, `{"route":`...)
	b = appendJSONString(b, text)
	b = append(b, `,"values":{`...)
	for i, n := range names {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, n)
		b = append(b, ':')
		b = appendJSONString(b, value(i))
	}
	return append(b, "}}\n"...)
}

func isWrite(method string) bool {
	return method == "POST" || method == "PUT" || method == "PATCH"
}
