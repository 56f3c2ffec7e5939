package main

// The typed write of the mixed workload, as examples/records.hpp declares it for the
// gateway: the same members, the same rules, the same answer.

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"unicode/utf8"
)

// Every member but note is required, as the gateway's typed decode requires it: a pointer
// (nil slice for tags) tells a missing member from a zero one, the way Go code that must
// refuse a missing member with encoding/json does it.
type recordRequest struct {
	Name     *string  `json:"name"`
	Email    *string  `json:"email"`
	Quantity *int64   `json:"quantity"`
	Active   *bool    `json:"active"`
	Score    *float64 `json:"score"`
	Tags     []string `json:"tags"`
	Region   *string  `json:"region"`
	Note     *string  `json:"note"`
}

type recordAnswer struct {
	ID       string `json:"id"`
	Route    string `json:"route"`
	Name     string `json:"name"`
	Quantity int64  `json:"quantity"`
	Tags     int    `json:"tags"`
}

var lastID uint64

var regions = map[string]bool{"us-east": true, "us-west": true, "eu-west": true,
	"eu-central": true, "ap-south": true}

// check applies the record's schema constraints; "" when the record keeps them all.
func (r *recordRequest) check() string {
	switch {
	case r.Name == nil:
		return "missing member \"name\""
	case r.Email == nil:
		return "missing member \"email\""
	case r.Quantity == nil:
		return "missing member \"quantity\""
	case r.Active == nil:
		return "missing member \"active\""
	case r.Score == nil:
		return "missing member \"score\""
	case r.Tags == nil:
		return "missing member \"tags\""
	case r.Region == nil:
		return "missing member \"region\""
	}
	switch n := utf8.RuneCountInString(*r.Name); {
	case n < 1 || n > 64:
		return "/name must be 1 to 64 characters"
	case utf8.RuneCountInString(*r.Email) > 254 || !isEmail(*r.Email):
		return "/email is not an email address"
	case *r.Quantity < 0 || *r.Quantity > 1000000:
		return "/quantity is out of 0..1000000"
	case *r.Score < 0 || *r.Score > 10:
		return "/score is out of 0..10"
	case len(r.Tags) > 16:
		return "/tags has more than 16 items"
	case !regions[*r.Region]:
		return "/region is not one of the values enum lists"
	case r.Note != nil && utf8.RuneCountInString(*r.Note) > 280:
		return "/note is longer than 280 characters"
	}
	for i, t := range r.Tags {
		if !isTag(t) {
			return fmt.Sprintf("/tags/%d does not match ^[a-z0-9-]{1,32}$", i)
		}
	}
	return ""
}

// isTag is ^[a-z0-9-]{1,32}$ in one pass, as the gateway's validator matches such a pattern.
func isTag(s string) bool {
	if len(s) < 1 || len(s) > 32 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// isEmail follows the gateway's format check (src/app/typed/schema_validator.hpp, is_email): a
// dot-atom local part of at most 64 bytes, '@', a hostname.
func isEmail(s string) bool {
	at := strings.LastIndexByte(s, '@')
	if at <= 0 || at > 64 {
		return false
	}
	local, domain := s[:at], s[at+1:]
	if local[0] == '.' || local[len(local)-1] == '.' || strings.Contains(local, "..") {
		return false
	}
	for i := 0; i < len(local); i++ {
		c := local[i]
		if !(isAlnum(c) || strings.IndexByte("!#$%&'*+-/=?^_`{|}~.", c) >= 0) {
			return false
		}
	}
	return isHostname(domain)
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func isHostname(s string) bool {
	if len(s) == 0 || len(s) > 253 {
		return false
	}
	for _, label := range strings.Split(s, ".") {
		if len(label) == 0 || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for i := 0; i < len(label); i++ {
			if !isAlnum(label[i]) && label[i] != '-' {
				return false
			}
		}
	}
	return true
}

// typedWrite decodes, checks and answers one record write: the status and the body.
func typedWrite(method, route, contentType string, body []byte) (int, []byte) {
	if !strings.HasPrefix(contentType, "application/json") {
		return 415, problem(415, "the body must be application/json")
	}
	var in recordRequest
	if err := json.Unmarshal(body, &in); err != nil {
		return 400, problem(400, err.Error())
	}
	if why := in.check(); why != "" {
		return 422, problem(422, why)
	}
	id := atomic.AddUint64(&lastID, 1)
	out, err := json.Marshal(recordAnswer{ID: "r-" + strconv.FormatUint(id, 10), Route: route,
		Name: *in.Name, Quantity: *in.Quantity, Tags: len(in.Tags)})
	if err != nil {
		return 500, problem(500, err.Error())
	}
	if method == "POST" {
		return 201, out
	}
	return 200, out
}

func problem(status int, detail string) []byte {
	b, _ := json.Marshal(map[string]interface{}{"status": status, "detail": detail})
	return b
}
