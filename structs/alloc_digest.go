package structs

// AllocsDigest is an order-independent digest of a set of allocations,
// each named by its ID and index (a client's allocs-sync: what the client
// holds at or below an index against what the servers hold there). Add
// each member with Add; two sets with the same members have the same
// digest, and two different sets almost never do (a sum of 64-bit FNV-1a
// hashes of ID and index). The zero digest is the empty set's.
type AllocsDigest uint64

// Add returns the digest with the alloc (id at index) added.
func (d AllocsDigest) Add(id string, index uint64) AllocsDigest {
	return d + AllocsDigest(digestOf(id, index))
}

// Remove returns the digest with the alloc (id at index), added before,
// taken out.
func (d AllocsDigest) Remove(id string, index uint64) AllocsDigest {
	return d - AllocsDigest(digestOf(id, index))
}

// digestOf is one member's part of a digest.
func digestOf(id string, index uint64) uint64 {
	const (
		offset = 14695981039346656037
		prime  = 1099511628211
	)
	h := uint64(offset)
	for i := 0; i < len(id); i++ {
		h ^= uint64(id[i])
		h *= prime
	}
	for i := 0; i < 8; i++ {
		h ^= index >> (8 * i) & 0xff
		h *= prime
	}
	return h
}
