package robotstxt

// A site holds at most a quarter of StoreConfig.MaxMemory, the room every
// new site has in the table (see store_table.go). One that would hold
// more keeps fewer earlier versions, the oldest dropped first, as past
// MaxVersions: a crawler served one of those is given the benefit of the
// doubt. When the version in force alone holds more, its file is read
// only as far as fits, as a file past the size limit is read to the limit
// (RFC 9309 §2.5): the rules past the cut are not enforced, and
// Snapshot.Truncated and the file's diagnostics say where it stopped. A
// site held whole would take the room of many others; a site not held at
// all would be fetched and parsed again at every request, each a first
// fetch that other new sites then lack, and judged meanwhile as
// unreachable. Read in part it is held like any other, refreshed when its
// copy is due, and held whole once it fits: its rules up to the cut are
// enforced, and a crawler that obeys the whole file is never denied for
// it. With MaxMemory at MinMaxMemory or more, the cut leaves at least the
// 500 KiB RFC 9309 §2.5 has crawlers read (TestMinMaxMemory).

// fitTries bounds the parses fit makes to find how much of a file fits:
// each aims at the room by the held size the last one measured, with a
// margin, so two suffice for files whose held size grows evenly with
// their length.
const fitTries = 6

// fit keeps what s, a snapshot not yet published whose file was read
// from body, holds within l.maxSite (see above), and tells onSite when it
// cut the file.
func (l *lifecycle) fit(s *Snapshot, body []byte, truncated bool) {
	if l.maxSite <= 0 || s.weight() <= l.maxSite {
		return
	}
	for len(s.Earlier) > 0 && s.weight() > l.maxSite {
		s.Earlier = s.Earlier[:len(s.Earlier)-1]
	}
	// The body kept for serving counts in what the site holds, but is
	// never cut: the file served is the file fetched.
	if body == nil || s.Robots == nil || s.weight()-int64(cap(s.Body)) <= l.maxSite {
		return
	}
	parsed := s.Robots.HeldSize() + s.groups.held()
	room := l.maxSite - (s.weight() - int64(cap(s.Body)) - int64(parsed))
	read := min(len(body), l.maxSize)
	for range fitTries {
		read = int(float64(read) * float64(room) / float64(parsed) * 0.95)
		if read <= 0 {
			read = 1 // nothing fits: the least file, which holds a few hundred octets
		}
		s.Robots = parseRobotsBody(body, true, read)
		s.groups = NewGroupIndex(s.Robots)
		if parsed = s.Robots.HeldSize() + s.groups.held(); int64(parsed) <= room || read == 1 {
			break
		}
	}
	s.Truncated = true
	s.weigh()
	if l.onSite != nil {
		l.onSite(SiteCut, s.Source)
	}
}
