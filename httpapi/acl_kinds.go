package httpapi

import (
	"errors"
	"net/http"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/structs"
)

// aclKind is one kind of ACL object whose handlers share a shape: decode
// one from a create or update, read one in a blocking query, check one
// exists before an update, read it back after a write, delete one. notFound is Nomad's text for a missing
// one (a 404); table is the state table whose index answers a read.
type aclKind[T any] struct {
	notFound string
	table    string
}

var (
	roleKind        = aclKind[structs.ACLRole]{"ACL role not found", state.TableACLRoles}
	bindingRuleKind = aclKind[structs.ACLBindingRule]{"ACL binding rule not found", state.TableACLBindingRules}
	authMethodKind  = aclKind[structs.ACLAuthMethod]{"ACL auth-method not found", state.TableACLAuthMethods}
)

// decode answers the object a create or update request's body holds,
// once ACLs are on.
func (k aclKind[T]) decode(s *Server, r *http.Request) (*T, error) {
	if err := s.aclOn(); err != nil {
		return nil, err
	}
	var v T
	if err := decodeBody(r, &v); err != nil {
		return nil, err
	}
	return &v, nil
}

// found passes a state lookup's answer on; a missing object is a 404.
func (k aclKind[T]) found(v *T, err error) (*T, error) {
	if err != nil {
		return nil, err
	}
	if v == nil {
		return nil, Errorf(http.StatusNotFound, "%s", k.notFound)
	}
	return v, nil
}

// read answers a blocking read of the object lookup finds, shaped by
// answer, at the index of k's table.
func (k aclKind[T]) read(s *Server, w http.ResponseWriter, r *http.Request, lookup func(*state.Snapshot) (*T, error), answer func(*T) *T) (any, error) {
	if err := s.aclOn(); err != nil {
		return nil, err
	}
	o, err := parseQuery(r)
	if err != nil {
		return nil, err
	}
	return s.blockingRead(w, r, o, func(_ memdb.WatchSet, snap *state.Snapshot) (any, uint64, error) {
		v, err := lookup(snap)
		if err != nil {
			return nil, 0, err
		}
		idx, err := snap.Index(k.table)
		if err != nil {
			return nil, 0, err
		}
		if v == nil {
			return nil, idx, Errorf(http.StatusNotFound, "%s", k.notFound)
		}
		return answer(v), idx, nil
	})
}

// delete applies a delete request of type t; the state's ErrNotFound is a
// 404.
func (k aclKind[T]) delete(s *Server, w http.ResponseWriter, r *http.Request, t fsm.MessageType, req any) (any, error) {
	if err := s.aclOn(); err != nil {
		return nil, err
	}
	_, err := s.applyACL(w, r, t, req)
	if errors.Is(err, state.ErrNotFound) {
		return nil, Errorf(http.StatusNotFound, "%s", k.notFound)
	}
	return nil, err
}

// samePathID fills an update body's empty ID (or name) with the one in
// the URL, and reports whether the two agree.
func samePathID(body *string, url string) bool {
	if *body == "" {
		*body = url
	}
	return *body == url
}

// asStored answers an object as stored.
func asStored[T any](v *T) *T { return v }
