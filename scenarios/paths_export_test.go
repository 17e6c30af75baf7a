package scenarios

// Outside is the plan's check that every file it names is under out.
func Outside(out string, p *Plan) error { return outside(out, p) }
