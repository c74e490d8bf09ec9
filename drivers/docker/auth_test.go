package docker

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/droverhq/drover/drivers"
	"github.com/droverhq/drover/drivers/docker/dockertest"
)

// TestPullWithRegistryAuth pulls the test image from a registry on
// 127.0.0.1 that asks for basic auth: with the right credentials the task
// runs; with a wrong password the start fails with the registry's reason;
// with auth_soft_fail, refused credentials fall back to an anonymous pull
// from an open registry. The password is never logged.
func TestPullWithRegistryAuth(t *testing.T) {
	e := newEnv(t)
	const user, pass, wrong = "drover", "pull-s3cret-9f2", "not-the-Password-7c1"
	authed := dockertest.Registry(t, user, pass)
	open := dockertest.Registry(t, "", "")
	private := authed + "/drover-test/private:1"
	public := open + "/drover-test/public:1"
	dockertest.Push(t, e.cli, e.image, private, user, pass)
	dockertest.Push(t, e.cli, e.image, public, "", "")

	var logs strings.Builder
	d := New(Options{Logger: hclog.New(&hclog.LoggerOptions{Output: &logs, Level: hclog.Trace})})
	t.Cleanup(func() { d.Close() })
	run := func(name, image string, auth map[string]any, soft bool) (*drivers.TaskHandle, error) {
		cfg := e.task(name, "echo pulled")
		cfg.Config["image"] = image
		if auth != nil {
			cfg.Config["auth"] = []any{auth}
		}
		if soft {
			cfg.Config["auth_soft_fail"] = true
		}
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		h, err := d.Start(ctx, cfg)
		if err == nil {
			t.Cleanup(func() { _ = d.Destroy(h) })
			if r := waitExit(t, d, h); !r.Successful() {
				t.Fatalf("%s: exit %+v", name, r)
			}
		}
		return h, err
	}

	if _, err := run("noauth", private, nil, false); err == nil || !strings.Contains(strings.ToLower(err.Error()), "no basic auth credentials") && !strings.Contains(strings.ToLower(err.Error()), "unauthorized") {
		t.Fatalf("a pull without credentials: %v, want the registry's refusal", err)
	}
	if _, err := run("good", private, map[string]any{"username": user, "password": pass, "server_address": authed}, false); err != nil {
		t.Fatalf("a pull with the right credentials: %v", err)
	}
	dockertest.RemoveTag(t, e.cli, private)
	_, err := run("bad", private, map[string]any{"username": user, "password": wrong, "server_address": authed}, false)
	if err == nil || !strings.Contains(err.Error(), "failed to pull image") || !strings.Contains(strings.ToLower(err.Error()), "unauthorized") {
		t.Fatalf("a pull with a wrong password: %v, want the registry's unauthorized", err)
	}
	if strings.Contains(err.Error(), wrong) {
		t.Fatalf("the error shows the password: %v", err)
	}
	if _, err := run("soft", public, map[string]any{"username": user, "password": wrong, "server_address": open}, true); err != nil {
		t.Fatalf("auth_soft_fail on an image that needs no credentials: %v", err)
	}
	if s := logs.String(); strings.Contains(s, pass) || strings.Contains(s, wrong) {
		t.Fatalf("a password is in the driver's log:\n%s", s)
	}
	t.Logf("driver log:\n%s", logs.String())
}

// authRefused tells the registry's refusals of credentials from other
// pull failures, so that auth_soft_fail retries only those.
func TestAuthRefused(t *testing.T) {
	for msg, want := range map[string]bool{
		"Head \"http://127.0.0.1:5000/v2/x/manifests/1\": unauthorized: authentication required": true,
		"pull access denied for x, repository does not exist or may require 'docker login'":      true,
		"manifest for x:1 not found: manifest unknown":                                           false,
		"dial tcp 127.0.0.1:5000: connect: connection refused":                                   false,
	} {
		if got := authRefused(errors.New(msg)); got != want {
			t.Errorf("authRefused(%q) = %v, want %v", msg, got, want)
		}
	}
}
