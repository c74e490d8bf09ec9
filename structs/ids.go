package structs

import (
	"crypto/rand"
	"fmt"
)

// GenerateUUID returns a random RFC 4122 version 4 UUID. Only the leader
// and clients mint IDs; the state machine never does.
func GenerateUUID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(fmt.Sprintf("structs: reading random bytes: %v", err))
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// ShortID returns the first eight characters of an ID, as CLIs print them.
func ShortID(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}
