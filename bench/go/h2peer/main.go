// The Go peer of bench/load/http2: net/http answering one route over HTTP/2, h2 over TLS
// (net/http's own, by ALPN) and h2c by prior knowledge (golang.org/x/net/http2/h2c, Debian's
// golang-golang-x-net-dev), the way a Go service serves gRPC-style clients. It answers what
// the gateway answers for GET /v1/health, so both send the same bytes. Built in GOPATH mode
// from Debian's packages (no network): bench/load/http2 builds it.
//
// It prints "waypoint-peer-h2: 1 routes on http://127.0.0.1:PORT" and, with -tls-cert,
// "waypoint-peer-h2: tls on https://127.0.0.1:PORT", as the gateway does.
package main

import (
	"crypto/tls"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/h2c"
)

const answer = `{"route":"GET /v1/health","values":{}}`

func main() {
	cert := flag.String("tls-cert", "", "PEM certificate chain (with -tls-key: an h2 listener)")
	key := flag.String("tls-key", "", "PEM private key")
	flag.Parse()

	mux := http.NewServeMux()
	mux.HandleFunc("/v1/health", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(answer))
	})
	h2s := &http2.Server{MaxConcurrentStreams: 100}

	plain, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("waypoint-peer-h2: 1 routes on http://%s\n", plain.Addr())
	go func() { log.Fatal(http.Serve(plain, h2c.NewHandler(mux, h2s))) }()

	if *cert != "" {
		pair, err := tls.LoadX509KeyPair(*cert, *key)
		if err != nil {
			log.Fatal(err)
		}
		secure, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			log.Fatal(err)
		}
		server := &http.Server{Handler: mux, TLSConfig: &tls.Config{Certificates: []tls.Certificate{pair}}}
		if err := http2.ConfigureServer(server, h2s); err != nil {
			log.Fatal(err)
		}
		fmt.Printf("waypoint-peer-h2: tls on https://%s\n", secure.Addr())
		go func() { log.Fatal(server.ServeTLS(secure, "", "")) }()
	}
	os.Stdout.Sync()

	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	<-stop
}
