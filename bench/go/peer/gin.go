package main

// gin on net/http, registered as bench/go/main.go registers it for the routing benchmark.

import (
	"net"
	"net/http"
	"strings"

	"../table"
	"github.com/gin-gonic/gin"
)

func ginServer(routes []table.Route, typed bool, ln net.Listener) func() error {
	gin.SetMode(gin.ReleaseMode)
	e := gin.New()
	// The gateway runs a recover middleware; gin's counterpart, for the same guarantee.
	e.Use(gin.Recovery())
	for _, r := range routes {
		path, why := table.Translate(r, table.Colon)
		if why != "" {
			fail("gin cannot serve %q: %s", r.Text, why)
		}
		methods := []string{r.Method}
		if r.Method == "" {
			methods = []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"}
		}
		for _, m := range methods {
			e.Handle(m, path, ginHandler(r, m, typed))
		}
	}
	return func() error { return http.Serve(ln, e) }
}

func ginHandler(r table.Route, method string, typed bool) gin.HandlerFunc {
	text := r.Text
	if typed && isWrite(method) {
		return func(c *gin.Context) {
			body, err := c.GetRawData()
			if err != nil {
				c.Status(http.StatusBadRequest)
				return
			}
			status, out := typedWrite(method, text, c.ContentType(), body)
			c.Data(status, "application/json", out)
		}
	}
	names := table.WildcardNames(r)
	return func(c *gin.Context) {
		body := echoBody(text, names, func(i int) string {
			// gin's *rest value keeps the slash before it; waypoint's does not.
			return strings.TrimPrefix(c.Param(names[i]), "/")
		})
		c.Data(http.StatusOK, "application/json", body)
	}
}
