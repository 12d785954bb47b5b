package changepoint

import "math"

// Stats describe one segment of a series.
type Stats struct {
	N      int     `json:"n"`
	Mean   float64 `json:"mean"`
	StdDev float64 `json:"stdDev"`
}

func stats(xs []float64) Stats {
	s := Stats{N: len(xs)}
	if len(xs) == 0 {
		return s
	}
	for _, x := range xs {
		s.Mean += x
	}
	s.Mean /= float64(len(xs))
	if len(xs) > 1 {
		var ss float64
		for _, x := range xs {
			ss += (x - s.Mean) * (x - s.Mean)
		}
		s.StdDev = math.Sqrt(ss / float64(len(xs)-1))
	}
	return s
}

// tTest is the two-sided p-value of Student's two-sample t-test, with the
// variances pooled, that a and b have the same mean. Pooling keeps a short
// segment whose few points happen to lie close together from passing for
// a shift, as it would in Welch's test. Two segments without spread differ
// with certainty when their means do.
func tTest(a, b Stats) float64 {
	if a.N < 2 || b.N < 2 {
		return 1
	}
	df := float64(a.N + b.N - 2)
	pooled := ((float64(a.N-1))*a.StdDev*a.StdDev + float64(b.N-1)*b.StdDev*b.StdDev) / df
	se := math.Sqrt(pooled * (1/float64(a.N) + 1/float64(b.N)))
	if se == 0 {
		if a.Mean == b.Mean {
			return 1
		}
		return 0
	}
	return studentTwoSided((a.Mean-b.Mean)/se, df)
}

// studentTwoSided is P(|T| >= |t|) for Student's t with df degrees of
// freedom: the regularized incomplete beta I_x(df/2, 1/2), x = df/(df+t²).
func studentTwoSided(t, df float64) float64 {
	return incompleteBeta(df/2, 0.5, df/(df+t*t))
}

// incompleteBeta is the regularized incomplete beta function I_x(a, b),
// from its continued fraction (Lentz's method), on the side where it
// converges fast.
func incompleteBeta(a, b, x float64) float64 {
	switch {
	case x <= 0:
		return 0
	case x >= 1:
		return 1
	}
	lbeta := lgamma(a+b) - lgamma(a) - lgamma(b)
	front := math.Exp(lbeta + a*math.Log(x) + b*math.Log1p(-x))
	if x < (a+1)/(a+b+2) {
		return front * betaFraction(a, b, x) / a
	}
	return 1 - front*betaFraction(b, a, 1-x)/b
}

func lgamma(x float64) float64 {
	v, _ := math.Lgamma(x)
	return v
}

// betaFraction evaluates the continued fraction of the incomplete beta.
func betaFraction(a, b, x float64) float64 {
	const tiny, eps = 1e-300, 1e-15
	c, d := 1.0, 1-(a+b)*x/(a+1)
	if math.Abs(d) < tiny {
		d = tiny
	}
	d = 1 / d
	h := d
	for m := 1; m <= 300; m++ {
		fm := float64(m)
		// Even step.
		num := fm * (b - fm) * x / ((a + 2*fm - 1) * (a + 2*fm))
		d = 1 + num*d
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = 1 + num/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		h *= d * c
		// Odd step.
		num = -(a + fm) * (a + b + fm) * x / ((a + 2*fm) * (a + 2*fm + 1))
		d = 1 + num*d
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = 1 + num/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		delta := d * c
		h *= delta
		if math.Abs(delta-1) < eps {
			break
		}
	}
	return h
}
