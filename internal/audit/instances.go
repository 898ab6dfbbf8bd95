package audit

// Instances. A line names the Caddy instance that wrote it in its
// instance field; a line without one (a handler that does not write it)
// is taken to come from an instance of its own for each log read, named
// by the log: the logs of several instances are most often kept one file
// per instance. The audit uses instances to say where a request or a
// fetch was recorded, and to count once a request that several instances
// recorded (see duplicates.go); it never needs them to link a fetch to a
// crawler, which it does across instances.

// MaxInstances bounds the instances told apart: a fleet has a few dozen,
// and rotated logs without the field count one per file. Past it, lines
// are counted as of OtherInstance.
const MaxInstances = 4096

// maxInstanceLength cuts an instance's name: Caddy's instance ids are
// UUIDs, and a log's name is a path.
const maxInstanceLength = 256

// OtherInstance names the instances past MaxInstances.
const OtherInstance = "(other)"

// instanceTable numbers instances by name.
type instanceTable struct {
	ids   map[string]uint32
	names []string
}

// id returns the number of the instance named name, adding it.
func (t *instanceTable) id(name []byte) uint32 {
	name = cut(name, maxInstanceLength)
	if id, ok := t.ids[string(name)]; ok {
		return id
	}
	if t.ids == nil {
		t.ids = make(map[string]uint32)
	}
	if len(t.names) >= MaxInstances {
		name = []byte(OtherInstance)
		if id, ok := t.ids[OtherInstance]; ok {
			return id
		}
	}
	id := uint32(len(t.names))
	t.names = append(t.names, string(name))
	t.ids[string(name)] = id
	return id
}

// name returns the name of instance id.
func (t *instanceTable) name(id uint32) string {
	if int(id) < len(t.names) {
		return t.names[id]
	}
	return OtherInstance
}

// instanceOf returns the instance of a line: its own field, or the log
// being read (numbered when a line first needs it, so that a log whose
// lines all name their instance is none).
func (a *Auditor) instanceOf(rec *rawRecord) uint32 {
	if rec.has&hasInstance != 0 && len(rec.instance) > 0 {
		return a.instances.id(rec.instance)
	}
	if !a.inputNumbered {
		a.inputInstance, a.inputNumbered = a.instances.id([]byte(a.inputName)), true
	}
	return a.inputInstance
}
