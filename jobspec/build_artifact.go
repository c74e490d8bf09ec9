package jobspec

import (
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/droverhq/drover/structs"
)

// checksumLen is the hex length of each checksum type go-getter knows.
var checksumLen = map[string]int{"md5": 32, "sha1": 40, "sha256": 64, "sha512": 128}

// artifacts builds a task's artifact blocks: a source is required and
// comes over the network (http, https, git or hg; never a path on the
// client's host, see structs.CheckArtifactSource), the mode is one of
// Nomad's, a checksum is "type:hex" of a type go-getter checks (or a
// checksums file's URL, judged as a source), and the destination stays
// inside the task's directory.
func (b *builder) artifacts(path string, as []*specArtifact) []*structs.TaskArtifact {
	var out []*structs.TaskArtifact
	for i, a := range as {
		p := fmt.Sprintf("%s.Artifacts[%d]", path, i)
		ta := &structs.TaskArtifact{
			GetterSource:  orStr(a.GetterSource, ""),
			GetterOptions: a.GetterOptions,
			GetterHeaders: a.GetterHeaders,
			GetterMode:    orStr(a.GetterMode, structs.ArtifactModeAny),
			RelativeDest:  orStr(a.RelativeDest, structs.DefaultArtifactDest),
			Chown:         a.Chown,
		}
		lay(&ta.GetterInsecure, a.GetterInsecure)
		if ta.GetterSource == "" {
			b.err(p, "artifact.source is required")
		} else if err := structs.CheckArtifactSource(ta.GetterSource); err != nil {
			b.err(p+".GetterSource", "%q: %v", ta.GetterSource, err)
		}
		switch ta.GetterMode {
		case structs.ArtifactModeAny, structs.ArtifactModeFile, structs.ArtifactModeDir:
		default:
			b.err(p+".GetterMode", "must be %q, %q or %q (got %q)", structs.ArtifactModeAny, structs.ArtifactModeFile, structs.ArtifactModeDir, ta.GetterMode)
		}
		if !structs.ArtifactDestInside(ta.RelativeDest) {
			b.err(p+".RelativeDest", "must stay inside the task's directory or the allocation's shared ../alloc (got %q)", ta.RelativeDest)
		}
		if c, ok := ta.GetterOptions["checksum"]; ok {
			if err := checkChecksum(c); err != nil {
				b.err(p+".GetterOptions", "checksum: %v", err)
			} else if u, ok := strings.CutPrefix(c, "file:"); ok {
				if err := structs.CheckArtifactSource(u); err != nil {
					b.err(p+".GetterOptions", "checksum: the checksums file %q: %v", u, err)
				}
			}
		}
		out = append(out, ta)
	}
	return out
}

// checkChecksum checks a checksum option's "type:hex" form; a value with
// an interpolation is checked by the client, once it is filled in, and an
// empty one checks nothing (as go-getter reads it).
func checkChecksum(c string) error {
	if c == "" || strings.Contains(c, "${") {
		return nil
	}
	typ, sum, ok := strings.Cut(c, ":")
	if !ok {
		return fmt.Errorf("must be written type:value, as \"sha256:<hex>\" (got %q)", c)
	}
	if typ == "file" {
		// go-getter reads the checksum from a checksums file at that URL.
		return nil
	}
	n, known := checksumLen[typ]
	if !known {
		return fmt.Errorf("unknown type %q (md5, sha1, sha256, sha512, or file: a checksums file's URL)", typ)
	}
	if _, err := hex.DecodeString(sum); err != nil || len(sum) != n {
		return fmt.Errorf("a %s checksum is %d hex digits (got %q)", typ, n, sum)
	}
	return nil
}
