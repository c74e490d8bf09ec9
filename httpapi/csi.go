package httpapi

import (
	"net/http"

	"github.com/droverhq/drover/acl"
	"github.com/droverhq/drover/state"
)

// Drover has no CSI: no plugins are fingerprinted, so no CSI volume can be
// registered or claimed (a group's volume block with type = "csi" is
// refused at submission). Nomad's volume endpoints answer as Nomad's does
// for a cluster without any, and refuse the writes that would need a
// plugin:
//
//	GET    /v1/volumes[?type=csi|host]          → []: no CSI volumes, and no dynamic host volumes
//	                                              (host volumes are the clients' host_volume
//	                                              blocks, on each node); another type is a 404
//	GET    /v1/volume/csi/{id}                  → 404 "volume not found"
//	PUT    /v1/volume/csi/{id}[/create]         → 400: CSI volumes are not supported by drover
//	DELETE /v1/volume/csi/{id}[/detach|/delete] → 404 "volume not found"
//	GET    /v1/plugins[?type=csi]               → []
//	GET    /v1/plugin/csi/{id}                  → 404 "plugin not found"

func init() {
	register(
		route{"GET /v1/volumes", readRoute, nsCap(acl.NamespaceCapabilityCSIListVolume), (*Server).volumesList},
		route{"GET /v1/volume/csi/{id}", readRoute, nsCap(acl.NamespaceCapabilityCSIReadVolume), (*Server).csiVolumeNotFound},
		route{"PUT /v1/volume/csi/{id}", writeRoute, nsCap(acl.NamespaceCapabilityCSIWriteVolume), (*Server).csiVolumeRefused},
		route{"PUT /v1/volume/csi/{id}/create", writeRoute, nsCap(acl.NamespaceCapabilityCSIWriteVolume), (*Server).csiVolumeRefused},
		route{"DELETE /v1/volume/csi/{id}", writeRoute, nsCap(acl.NamespaceCapabilityCSIWriteVolume), (*Server).csiVolumeNotFound},
		route{"DELETE /v1/volume/csi/{id}/detach", writeRoute, nsCap(acl.NamespaceCapabilityCSIMountVolume), (*Server).csiVolumeNotFound},
		route{"DELETE /v1/volume/csi/{id}/delete", writeRoute, nsCap(acl.NamespaceCapabilityCSIWriteVolume), (*Server).csiVolumeNotFound},
		route{"GET /v1/plugins", readRoute, nodeRead, (*Server).pluginsList},
		route{"GET /v1/plugin/csi/{id}", readRoute, nodeRead, (*Server).csiPluginNotFound},
	)
}

// errNoCSI refuses what would need a CSI plugin.
var errNoCSI = Errorf(http.StatusBadRequest, "CSI volumes are not supported by drover: it runs no CSI plugins (host volumes are the clients' host_volume blocks)")

func (s *Server) volumesList(w http.ResponseWriter, r *http.Request) (any, error) {
	q := r.URL.Query()
	if q.Has("type") {
		switch q.Get("type") {
		case "csi", "host":
		default:
			return nil, Errorf(http.StatusNotFound, "resource not found")
		}
	}
	return s.emptyList(w)
}

func (s *Server) pluginsList(w http.ResponseWriter, r *http.Request) (any, error) {
	if t := r.URL.Query().Get("type"); t != "" && t != "csi" {
		return nil, Errorf(http.StatusBadRequest, "unsupported plugin type %q", t)
	}
	return s.emptyList(w)
}

// emptyList answers an empty list at the nodes table's index: whatever
// could ever fill these lists would come from the nodes' fingerprints.
func (s *Server) emptyList(w http.ResponseWriter) (any, error) {
	idx, err := s.backend.State().Snapshot().Index(state.TableNodes)
	if err != nil {
		return nil, err
	}
	s.setMeta(w, idx)
	return []struct{}{}, nil
}

func (s *Server) csiVolumeNotFound(http.ResponseWriter, *http.Request) (any, error) {
	return nil, Errorf(http.StatusNotFound, "volume not found")
}

func (s *Server) csiVolumeRefused(http.ResponseWriter, *http.Request) (any, error) {
	return nil, errNoCSI
}

func (s *Server) csiPluginNotFound(http.ResponseWriter, *http.Request) (any, error) {
	return nil, Errorf(http.StatusNotFound, "plugin not found")
}
