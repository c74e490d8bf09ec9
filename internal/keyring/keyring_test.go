package keyring

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/structs"
)

func key(t *testing.T, id string) *structs.RootKey {
	t.Helper()
	k, err := NewRootKey(id, time.Unix(1, 0), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestSealOpen(t *testing.T) {
	k := key(t, "k")
	lookup := func(id string) (*structs.RootKey, error) {
		if id == k.KeyID {
			return k, nil
		}
		return nil, nil
	}
	nonce, _ := NewNonce(rand.Reader)
	v := &structs.Variable{Namespace: "default", Path: "app/db", ModifyIndex: 4, Items: structs.VariableItems{"pw": "s3cret-value"}}
	ve, err := Seal(k, nonce, v)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(ve.Data, []byte("s3cret-value")) || ve.KeyID != "k" {
		t.Fatalf("sealed: %+v", ve)
	}
	got, err := Open(ve, lookup)
	if err != nil || got.Items["pw"] != "s3cret-value" || got.ModifyIndex != 4 {
		t.Fatalf("open: %+v %v", got, err)
	}
	// Moved to another path, the items no longer open.
	moved := ve.Copy()
	moved.Path = "app/other"
	if _, err := Open(moved, lookup); !errors.Is(err, ErrOpen) {
		t.Fatalf("moved: %v", err)
	}
	altered := ve.Copy()
	altered.Data[0] ^= 1
	if _, err := Open(altered, lookup); !errors.Is(err, ErrOpen) {
		t.Fatalf("altered: %v", err)
	}
	other := ve.Copy()
	other.KeyID = "gone"
	if _, err := Open(other, lookup); !errors.Is(err, ErrNoKey) {
		t.Fatalf("unknown key: %v", err)
	}
	// The key's material never shows in its formatting.
	for _, s := range []string{k.String(), k.GoString()} {
		if strings.Contains(s, string(k.Key)) || !strings.Contains(s, "k") {
			t.Fatalf("formatted key: %q", s)
		}
	}
}

func TestIdentity(t *testing.T) {
	k1, k2 := key(t, "k1"), key(t, "k2")
	keys := map[string]*structs.RootKey{"k1": k1}
	lookup := func(id string) (*structs.RootKey, error) { return keys[id], nil }
	now := time.Unix(1000, 0)
	c := IdentityClaims{Namespace: "default", JobID: "web", Group: "g", Task: "t", AllocationID: "a1"}
	tok, err := SignIdentity(k1, c, now)
	if err != nil {
		t.Fatal(err)
	}
	if !LooksLikeIdentity(tok) || LooksLikeIdentity("3f1e2d-secret") {
		t.Fatal("LooksLikeIdentity")
	}
	got, err := VerifyIdentity(tok, lookup, now.Add(time.Hour))
	if err != nil || got.JobID != "web" || got.Group != "g" || got.Task != "t" || got.AllocationID != "a1" {
		t.Fatalf("verify: %+v %v", got, err)
	}
	// Signed by a key the keyring does not hold: refused.
	forged, _ := SignIdentity(k2, c, now)
	if _, err := VerifyIdentity(forged, lookup, now); !errors.Is(err, ErrIdentity) {
		t.Fatalf("forged: %v", err)
	}
	// A changed claim breaks the signature.
	parts := strings.Split(tok, ".")
	parts[1] = parts[1][:len(parts[1])-2] + "AA"
	if _, err := VerifyIdentity(strings.Join(parts, "."), lookup, now); !errors.Is(err, ErrIdentity) {
		t.Fatal("tampered identity accepted")
	}
}

func TestRootKeyJSONLeavesTheMaterialOut(t *testing.T) {
	k := key(t, "k")
	b, err := json.Marshal(k)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), base64.StdEncoding.EncodeToString(k.Key)) || strings.Contains(string(b), `"Key"`) || !strings.Contains(string(b), `"KeyID":"k"`) {
		t.Fatalf("JSON of a root key: %s", b)
	}
}
