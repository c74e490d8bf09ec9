package structs

import (
	"encoding/json"
	"fmt"
)

// The keyring holds the root keys that seal variables and sign workload
// identities, in the replicated state. Nomad's shapes: RootKeyMeta is what
// the API shows (api.RootKeyMeta); the key material never leaves the
// servers.

// Root key states, Nomad's names: one key is active (new writes use it),
// the others inactive (kept to open what they sealed).
const (
	RootKeyStateActive   = "active"
	RootKeyStateInactive = "inactive"
)

// EncryptionAlgorithmAES256GCM is the one algorithm, Nomad's name.
const EncryptionAlgorithmAES256GCM = "aes256-gcm"

// RootKeyMeta describes a root key (api.RootKeyMeta).
type RootKeyMeta struct {
	KeyID       string
	Algorithm   string
	CreateTime  int64 // Unix nanoseconds, stamped by the leader
	CreateIndex uint64
	ModifyIndex uint64
	State       string
	PublishTime int64
}

// Active reports whether the key seals new writes.
func (m *RootKeyMeta) Active() bool { return m.State == RootKeyStateActive }

// RootKey is a root key: its metadata, 32 bytes of key material that seal
// variables, and an RSA private key (PKCS #1, DER) that signs workload
// identities (RS256, as Nomad's), all made by the leader from a
// cryptographic random source. Only the RSA key's public half leaves the
// servers (GET /.well-known/jwks.json). A key made before RSAKey existed
// has none: its identities are HS256, verifiable by the servers only.
// It is never logged (String and GoString leave the material out) nor
// returned by the API.
type RootKey struct {
	RootKeyMeta
	Key    []byte
	RSAKey []byte
}

// String names the key without its material.
func (k *RootKey) String() string {
	if k == nil {
		return "RootKey(nil)"
	}
	return fmt.Sprintf("RootKey(%s, %s)", k.KeyID, k.State)
}

// GoString is String, so that %#v does not print the material either.
func (k *RootKey) GoString() string { return k.String() }

// RootKeyUpsertRequest adds a root key to the keyring. An active key
// makes every other key inactive. With OnlyIfNone the key is added only
// when the keyring is empty (the leader's first key; a second leader's
// attempt is then a no-op).
type RootKeyUpsertRequest struct {
	Key        *RootKey
	OnlyIfNone bool
}

// AllocIdentityRequest asks the servers for workload identities of an
// allocation's tasks (PUT /v1/internal/alloc/{id}/identity): those named,
// or every task of the allocation's group when none is.
type AllocIdentityRequest struct {
	Tasks []string
}

// TaskIdentity is one task's workload identity: a signed JWT that the
// task's requests to the servers present as X-Nomad-Token.
type TaskIdentity struct {
	Task string
	JWT  string
}

// AllocIdentityResponse answers an AllocIdentityRequest.
type AllocIdentityResponse struct {
	AllocID    string
	Identities []TaskIdentity
}

// MarshalJSON writes the key's metadata only, so that no JSON answer,
// log line or state dump can carry the material. (The Raft log and
// snapshots encode the key with MessagePack, which keeps it.)
func (k RootKey) MarshalJSON() ([]byte, error) { return json.Marshal(k.RootKeyMeta) }

// RootKeyDeleteRequest removes an inactive root key from the keyring.
// Without Force, a key that still seals a variable is refused; with it,
// such variables can no longer be read.
type RootKeyDeleteRequest struct {
	KeyID string
	Force bool
}
