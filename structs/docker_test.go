package structs

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestDockerDocListsEveryKey keeps website/drivers/docker.md true: every
// key the driver runs has a row in its config table, and every key it
// refuses is named.
func TestDockerDocListsEveryKey(t *testing.T) {
	b, err := os.ReadFile("../website/drivers/docker.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	for _, k := range dockerKeys {
		if !strings.Contains(doc, "| `"+k+"` |") {
			t.Errorf("docker.md has no row for %s", k)
		}
	}
	for k := range dockerRefused {
		if !strings.Contains(doc, "`"+k+"`") {
			t.Errorf("docker.md does not name the refused key %s", k)
		}
	}
}

func TestParseDockerConfig(t *testing.T) {
	c, errs := ParseDockerConfig(map[string]any{
		"image": "web:1", "args": []any{"a"}, "labels": map[string]any{"x": "y"},
		"mount": []any{map[string]any{"target": "/v"}}, "image_pull_timeout": "30s",
	})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if c.Image != "web:1" || c.Args[0] != "a" || c.Labels["x"] != "y" || c.Mounts[0].Type != DockerMountVolume ||
		c.ImagePullTimeout.String() != "30s" {
		t.Fatalf("config %+v", c)
	}
	for _, tc := range []struct {
		config map[string]any
		key    string
		msg    string
	}{
		{map[string]any{}, "image", "is required"},
		{map[string]any{"image": ""}, "image", "must not be empty"},
		{map[string]any{"image": "x", "args": "a b"}, "args", "must be a list of strings (got a string)"},
		{map[string]any{"image": "x", "args": []any{1}}, "args[0]", "must be a string (got a number)"},
		{map[string]any{"image": "x", "commnd": "y"}, "commnd", "is not a docker driver option (did you mean command?)"},
		{map[string]any{"image": "x", "load": "a.tar"}, "load", "is not supported by drover"},
		{map[string]any{"image": "x", "auth": []any{map[string]any{"user": "u"}}}, "auth.user", "is not an option of the auth block"},
		{map[string]any{"image": "x", "volumes": []any{"a:relative"}}, "volumes[0]", "target must be an absolute path"},
		{map[string]any{"image": "x", "volumes": []any{"a:/b:z"}}, "volumes[0]", "mode must be ro or rw"},
		{map[string]any{"image": "x", "volumes": []any{"../../a:/b"}}, "volumes[0]", "leaves the allocation's directory"},
		{map[string]any{"image": "x", "mount": []any{map[string]any{"type": "volume", "source": "/abs", "target": "/t"}}}, "mount[0].source", "must name a Docker volume"},
		{map[string]any{"image": "x", "mount": []any{map[string]any{"type": "tmpfs", "target": "/t", "tmpfs_options": []any{map[string]any{"size": 1.5}}}}}, "mount[0].tmpfs_options[0].size", "whole number"},
		{map[string]any{"image": "x", "ports": []any{"a", "a"}}, "ports[1]", `names "a" twice`},
		{map[string]any{"image": "x", "work_dir": "rel"}, "work_dir", "absolute path"},
		{map[string]any{"image": "x", "image_pull_timeout": "0s"}, "image_pull_timeout", "must be positive"},
	} {
		_, errs := ParseDockerConfig(tc.config)
		found := false
		for _, e := range errs {
			if e.Key == tc.key && strings.Contains(e.Msg, tc.msg) {
				found = true
			}
		}
		if !found {
			t.Errorf("%v: errors %v, want %s %q", tc.config, errs, tc.key, tc.msg)
		}
	}
}

func TestRelativeSourceEscapes(t *testing.T) {
	for src, want := range map[string]bool{
		"data": false, "./data": false, "..": false, "../alloc/data": false, "../other-task/local": false,
		"../..": true, "../../x": true, "a/../../../x": true, "/abs": false,
	} {
		if got := RelativeSourceEscapes(src); got != want {
			t.Errorf("RelativeSourceEscapes(%q) = %v, want %v", src, got, want)
		}
	}
}

// An auth block's credentials; the password never prints.
func TestDockerAuth(t *testing.T) {
	c, errs := ParseDockerConfig(map[string]any{"image": "127.0.0.1:5000/app:1", "auth_soft_fail": true,
		"auth": []any{map[string]any{"username": "u", "password": "s3cret", "server_address": "127.0.0.1:5000"}}})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if c.Auth == nil || c.Auth.Username != "u" || c.Auth.Password != "s3cret" || c.Auth.ServerAddress != "127.0.0.1:5000" || !c.AuthSoftFail {
		t.Fatalf("auth %+v soft %v", *c.Auth, c.AuthSoftFail)
	}
	for _, s := range []string{fmt.Sprint(c.Auth), fmt.Sprintf("%v %+v %#v %s", c.Auth, c.Auth, c.Auth, c.Auth)} {
		if strings.Contains(s, "s3cret") {
			t.Fatalf("the password printed: %s", s)
		}
	}
}
