package apiclient

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

func TestAddressPrecedence(t *testing.T) {
	t.Setenv("DROVER_ADDR", "")
	t.Setenv("NOMAD_ADDR", "")
	if got := Address(""); got != DefaultAddress {
		t.Fatalf("default = %q", got)
	}
	t.Setenv("NOMAD_ADDR", "http://nomad:1")
	if got := Address(""); got != "http://nomad:1" {
		t.Fatalf("NOMAD_ADDR: %q", got)
	}
	t.Setenv("DROVER_ADDR", "http://drover:2")
	if got := Address(""); got != "http://drover:2" {
		t.Fatalf("DROVER_ADDR: %q", got)
	}
	if got := Address("http://flag:3"); got != "http://flag:3" {
		t.Fatalf("flag: %q", got)
	}
}

func TestQueryOptionsAndMeta(t *testing.T) {
	var gotQuery string
	var gotMethod string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotQuery, gotMethod = r.URL.RawQuery, r.Method
		w.Header().Set("X-Nomad-Index", "42")
		w.Header().Set("X-Nomad-KnownLeader", "true")
		w.Header().Set("X-Nomad-LastContact", "15")
		fmt.Fprint(w, `[]`)
	}))
	defer srv.Close()
	c, err := New(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, meta, err := c.Jobs().List(ctx, &QueryOptions{WaitIndex: 7, WaitTime: time.Second, AllowStale: true, Prefix: "we"})
	if err != nil {
		t.Fatal(err)
	}
	if gotQuery != "index=7&prefix=we&stale=true&wait=1s" {
		t.Fatalf("query %q", gotQuery)
	}
	if meta.LastIndex != 42 || !meta.KnownLeader || meta.LastContact != 15*time.Millisecond {
		t.Fatalf("meta %+v", meta)
	}
	if _, err := c.Delete(ctx, "/v1/job/web", &QueryOptions{Params: map[string]string{"purge": "true"}}, nil); err != nil {
		t.Fatal(err)
	}
	if gotMethod != "DELETE" || gotQuery != "purge=true" {
		t.Fatalf("delete: %s ?%s", gotMethod, gotQuery)
	}
}

func TestErrorsCarryStatusAndMessage(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "job not found", http.StatusNotFound)
	}))
	defer srv.Close()
	c, _ := New(srv.URL)
	_, _, err := c.Jobs().Info(context.Background(), "nope", nil)
	var se *StatusError
	if !errors.As(err, &se) || se.Code != 404 || se.Msg != "job not found" || !IsNotFound(err) {
		t.Fatalf("error %v", err)
	}
}

func TestNonJSONAnswerIsUnexpected(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, "<html>")
	}))
	defer srv.Close()
	c, _ := New(srv.URL)
	if _, err := c.Status().Leader(context.Background()); !errors.Is(err, ErrUnexpectedResponse) {
		t.Fatalf("error %v, want ErrUnexpectedResponse", err)
	}
}
