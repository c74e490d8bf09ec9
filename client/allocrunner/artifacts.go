package allocrunner

import (
	"github.com/droverhq/drover/client/taskenv"
	"github.com/droverhq/drover/structs"
)

// interpolateArtifacts fills ${NOMAD_*}, ${meta.*}, ${attr.*} and the
// task's variables into each artifact's source, destination, options and
// headers, as Nomad's client does before fetching them.
func interpolateArtifacts(as []*structs.TaskArtifact, env *taskenv.Env) []*structs.TaskArtifact {
	if len(as) == 0 {
		return nil
	}
	out := make([]*structs.TaskArtifact, len(as))
	for i, a := range as {
		c := a.Copy()
		c.GetterSource = env.Replace(c.GetterSource)
		c.RelativeDest = env.Replace(c.RelativeDest)
		for k, v := range c.GetterOptions {
			c.GetterOptions[k] = env.Replace(v)
		}
		for k, v := range c.GetterHeaders {
			c.GetterHeaders[k] = env.Replace(v)
		}
		out[i] = c
	}
	return out
}
