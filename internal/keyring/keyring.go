// Package keyring seals variables' items and signs workload identities
// with the root keys of the replicated keyring (structs.RootKey).
//
// Sealing is AES-256-GCM with a 12-byte nonce, the variable's namespace
// and path as additional data (so sealed items cannot be moved to another
// path). The callers are the leader's write path, which makes the key
// material and the nonces from a cryptographic random source and stamps
// the sealed result into the Raft request, and whichever server answers a
// read, which opens it. The package reads no clock of its own, and no
// random source but for the RSA key of a new root key (crypto/rsa draws
// from the system's since Go 1.26): the key is made on the leader and
// replicated, so the state machine stays deterministic.
package keyring

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/droverhq/drover/structs"
)

// Sentinel errors.
var (
	// ErrNoKey: the keyring holds no key (or not the one named).
	ErrNoKey = errors.New("keyring: no such root key")
	// ErrOpen: sealed items that the key does not open (altered, moved
	// to another path, or sealed under another key).
	ErrOpen = errors.New("keyring: cannot open sealed items")
)

// KeySize is the size of a root key's material (AES-256).
const KeySize = 32

// RSAKeyBits is the size of the RSA keys that sign workload identities
// (Nomad's).
const RSAKeyBits = 2048

// NonceSize is the size of a seal's nonce (GCM's standard).
const NonceSize = 12

// NewRootKey returns an active root key with material read from random
// and a new RSA key (RSAKeyBits) that signs workload identities.
func NewRootKey(id string, now time.Time, random io.Reader) (*structs.RootKey, error) {
	k := make([]byte, KeySize)
	if _, err := io.ReadFull(random, k); err != nil {
		return nil, fmt.Errorf("keyring: key material: %w", err)
	}
	rk, err := rsa.GenerateKey(random, RSAKeyBits)
	if err != nil {
		return nil, fmt.Errorf("keyring: signing key: %w", err)
	}
	return &structs.RootKey{
		RootKeyMeta: structs.RootKeyMeta{
			KeyID: id, Algorithm: structs.EncryptionAlgorithmAES256GCM,
			CreateTime: now.UnixNano(), State: structs.RootKeyStateActive,
		},
		Key:    k,
		RSAKey: x509.MarshalPKCS1PrivateKey(rk),
	}, nil
}

// NewNonce reads a nonce from random.
func NewNonce(random io.Reader) ([]byte, error) {
	n := make([]byte, NonceSize)
	if _, err := io.ReadFull(random, n); err != nil {
		return nil, fmt.Errorf("keyring: nonce: %w", err)
	}
	return n, nil
}

func aead(key *structs.RootKey) (cipher.AEAD, error) {
	if key == nil || len(key.Key) != KeySize {
		return nil, ErrNoKey
	}
	b, err := aes.NewCipher(key.Key)
	if err != nil {
		return nil, fmt.Errorf("keyring: %w", err)
	}
	return cipher.NewGCM(b)
}

func additionalData(ns, path string) []byte { return []byte(ns + "\x00" + path) }

// Seal returns v with its items sealed under key with nonce; the metadata
// is v's.
func Seal(key *structs.RootKey, nonce []byte, v *structs.Variable) (*structs.VariableEncrypted, error) {
	g, err := aead(key)
	if err != nil {
		return nil, err
	}
	if len(nonce) != g.NonceSize() {
		return nil, fmt.Errorf("keyring: nonce of %d bytes, want %d", len(nonce), g.NonceSize())
	}
	plain, err := json.Marshal(v.Items)
	if err != nil {
		return nil, fmt.Errorf("keyring: items: %w", err)
	}
	sealed := g.Seal(nil, nonce, plain, additionalData(v.Namespace, v.Path))
	clear(plain)
	return &structs.VariableEncrypted{
		VariableMetadata: v.Metadata(), KeyID: key.KeyID,
		Nonce: append([]byte(nil), nonce...), Data: sealed,
	}, nil
}

// Open returns ve with its items opened; lookup finds the key it names.
func Open(ve *structs.VariableEncrypted, lookup func(id string) (*structs.RootKey, error)) (*structs.Variable, error) {
	key, err := lookup(ve.KeyID)
	if err != nil {
		return nil, err
	}
	if key == nil {
		return nil, fmt.Errorf("%w: %s (variable %q)", ErrNoKey, ve.KeyID, ve.Path)
	}
	g, err := aead(key)
	if err != nil {
		return nil, err
	}
	if len(ve.Nonce) != g.NonceSize() {
		return nil, fmt.Errorf("%w: variable %q: nonce of %d bytes", ErrOpen, ve.Path, len(ve.Nonce))
	}
	plain, err := g.Open(nil, ve.Nonce, ve.Data, additionalData(ve.Namespace, ve.Path))
	if err != nil {
		return nil, fmt.Errorf("%w: variable %q: %w", ErrOpen, ve.Path, err)
	}
	var items structs.VariableItems
	err = json.Unmarshal(plain, &items)
	clear(plain)
	if err != nil {
		return nil, fmt.Errorf("%w: variable %q: %w", ErrOpen, ve.Path, err)
	}
	m := ve.VariableMetadata
	return &structs.Variable{Namespace: m.Namespace, Path: m.Path, CreateIndex: m.CreateIndex, ModifyIndex: m.ModifyIndex,
		CreateTime: m.CreateTime, ModifyTime: m.ModifyTime, Items: items, Lock: m.Lock.Copy()}, nil
}
