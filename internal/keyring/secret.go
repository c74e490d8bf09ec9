package keyring

import (
	"fmt"

	"github.com/droverhq/drover/structs"
)

// SealSecret seals a secret (an ACL token's SecretID, an auth method's
// client secret) under key with nonce. label binds the sealed secret to
// what it belongs to ("acl-token/<accessor>"): opened under another
// label, it does not open.
func SealSecret(key *structs.RootKey, nonce []byte, label string, secret []byte) (*structs.SealedSecret, error) {
	g, err := aead(key)
	if err != nil {
		return nil, err
	}
	if len(nonce) != g.NonceSize() {
		return nil, fmt.Errorf("keyring: nonce of %d bytes, want %d", len(nonce), g.NonceSize())
	}
	return &structs.SealedSecret{
		KeyID: key.KeyID, Nonce: append([]byte(nil), nonce...),
		Data: g.Seal(nil, nonce, secret, []byte("secret\x00"+label)),
	}, nil
}

// OpenSecret opens what SealSecret sealed under label; lookup finds the
// key it names.
func OpenSecret(s *structs.SealedSecret, label string, lookup func(id string) (*structs.RootKey, error)) ([]byte, error) {
	key, err := lookup(s.KeyID)
	if err != nil {
		return nil, err
	}
	if key == nil {
		return nil, fmt.Errorf("%w: %s (%s)", ErrNoKey, s.KeyID, label)
	}
	g, err := aead(key)
	if err != nil {
		return nil, err
	}
	if len(s.Nonce) != g.NonceSize() {
		return nil, fmt.Errorf("%w: %s: nonce of %d bytes", ErrOpen, label, len(s.Nonce))
	}
	plain, err := g.Open(nil, s.Nonce, s.Data, []byte("secret\x00"+label))
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrOpen, label, err)
	}
	return plain, nil
}
