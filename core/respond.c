/*
 * respond.c - collision response: velocities of two bodies after contact.
 *
 * DESIGN
 * What: given the two velocities at the moment of contact, the masses (or
 * static: infinite mass), the efficiencies and the contact normal n from
 * a towards b, the velocities after the contact, the impulse on b and the
 * kinetic energy before and after, per POST /v1/respond.
 *
 * How: impulse-based response with the pair's reduced mass, for bodies
 * that translate only (no rotational inertia: the contract moves bodies by
 * translation), as in Mirtich, "Impulse-based Dynamic Simulation of Rigid
 * Body Systems" (PhD thesis, Berkeley 1996, ch. 4) and Hecker, "Physics,
 * Part 3: Collision Response" (Game Developer, 1997), with the tangential
 * part as a coefficient of tangential restitution (Brach, "Mechanical
 * Impact Dynamics", 1991) instead of Coulomb friction:
 *   u  = vb - va                      relative velocity
 *   un = u . n,  ut = u - un n        normal and tangential parts
 *   un >= 0: separating or resting, nothing changes;
 *   du = (-e - 1) un n + (k - 1) ut   wanted change of u, so that
 *                                     u' . n = -e un and u'_t = k ut
 *   J  = du / (1/ma + 1/mb) = m* du   impulse on b, -J on a
 *   va' = va - J/ma,  vb' = vb + J/mb.
 * A static body has 1/m = 0. The velocity changes are computed as shares
 * of du, J/ma = du mb/(ma+mb) and J/mb = du ma/(ma+mb), rather than by
 * dividing J by each mass again: the shares are 1/2 exactly for equal
 * masses and 0 and 1 exactly against a static body, so a head-on swap and
 * a reflection off a wall come out exact, and no intermediate product of
 * two masses (or their reciprocals) can underflow or overflow for any
 * mass the api accepts. The normal component un is a Dot2 product (eft.h)
 * so the approach test sees the sign of the computed u correctly even
 * when its components cancel.
 *
 * Edge rules: two static bodies cannot exchange any impulse (both masses
 * are infinite), so both keep their velocities, the impulse is zero and
 * the state says why. Kinetic energy sums 0.5 m |v|^2 over non-static
 * bodies only: a static body's energy would be infinite (or undefined at
 * rest), and since its velocity never changes it contributes nothing to
 * the energy exchanged, which is what before/after compare.
 *
 * Why: the impulse form conserves momentum by construction (a gets
 * exactly the opposite impulse of b) and conserves energy exactly for
 * e = k = 1 in real arithmetic; with the shares above the computed
 * answer conserves both to a few units of roundoff of the velocities.
 */
#include "respond.h"

#include <assert.h>
#include <math.h>
#include <stddef.h>

#include "eft.h"

static int vec_finite(imp_vec3 v) { return isfinite(v.x) && isfinite(v.y) && isfinite(v.z); }

static double dot2v(imp_vec3 a, imp_vec3 b) {
    double x[3] = {a.x, a.y, a.z}, y[3] = {b.x, b.y, b.z};
    return imp_dot2(x, y, 3);
}

static double kinetic_energy(const imp_respond_body *b, imp_vec3 v) {
    return b->is_static ? 0.0 : 0.5 * b->mass * imp_dot(v, v);
}

static void check_body(const imp_respond_body *b) {
    (void)b; /* without NDEBUG only */
    assert(vec_finite(b->v));
    assert(b->is_static || (b->mass > 0.0 && isfinite(b->mass)));
    assert(b->restitution >= 0.0 && b->restitution <= 1.0);
    assert(b->tangential >= 0.0 && b->tangential <= 1.0);
}

/* The answer when nothing changes (energies left to the caller): the input velocities, no
 * impulse, the pair's e and k and the unit normal; the preconditions asserted. */
static imp_respond_result result_start(const imp_respond_input *in) {
    assert(in);
    check_body(&in->a);
    check_body(&in->b);
    imp_respond_result r;
    r.va = in->a.v;
    r.vb = in->b.v;
    r.impulse = imp_v3(0.0, 0.0, 0.0);
    r.wa = r.wb = r.impulse; /* bodies that do not turn */
    r.clamped = 0;
    r.e = in->a.restitution * in->b.restitution;
    r.k = in->a.tangential * in->b.tangential;
    int ok = imp_unit_scaled(in->normal, &r.normal, NULL);
    assert(ok == 0);
    (void)ok;
    return r;
}

imp_respond_result imp_respond_resolve(const imp_respond_input *in) {
    const imp_respond_body *a = &in->a, *b = &in->b;
    imp_respond_result r = result_start(in);
    r.ke_before = kinetic_energy(a, a->v) + kinetic_energy(b, b->v);
    r.ke_after = r.ke_before;

    if (a->is_static && b->is_static) {
        r.state = IMP_RESPOND_BOTH_STATIC;
        return r;
    }
    imp_vec3 n = r.normal;
    imp_vec3 u = imp_sub(b->v, a->v);
    double un = dot2v(u, n);
    if (un >= 0.0) {
        r.state = IMP_RESPOND_SEPARATING;
        return r;
    }

    imp_vec3 ut = imp_madd(u, n, -un);
    imp_vec3 du = imp_madd(imp_scale(n, (-r.e - 1.0) * un), ut, r.k - 1.0);

    /* share_a, share_b: the fractions of du that a loses and b gains
     * (1/ma and 1/mb over their sum); m_red: the reduced mass. */
    double share_a, share_b, m_red;
    if (a->is_static) {
        share_a = 0.0;
        share_b = 1.0;
        m_red = b->mass;
    } else if (b->is_static) {
        share_a = 1.0;
        share_b = 0.0;
        m_red = a->mass;
    } else {
        double total = a->mass + b->mass;
        share_a = b->mass / total;
        share_b = a->mass / total;
        m_red = a->mass * share_a;
    }
    if (!a->is_static) r.va = imp_madd(a->v, du, -share_a);
    if (!b->is_static) r.vb = imp_madd(b->v, du, share_b);
    r.impulse = imp_scale(du, m_red);
    r.ke_after = kinetic_energy(a, r.va) + kinetic_energy(b, r.vb);
    r.state = IMP_RESPOND_RESOLVED;
    return r;
}

/*
 * Turning bodies (imp_respond_resolve_turning). With r = point - position
 * for each body and M^-1 = 0, I^-1 = 0 for a static one, an impulse J on b
 * (-J on a) changes the relative velocity at the point u = (vb + wb x rb)
 * - (va + wa x ra) by K J, where
 *   K X = (1/ma + 1/mb) X + (Ia^-1 (ra x X)) x ra + (Ib^-1 (rb x X)) x rb
 * is symmetric positive definite (Mirtich 1996, ch. 4, "collision matrix").
 *   frictionless: J0 = jn n, jn = -(1 + e) un / (n . K n), leaving u0;
 *   sticking:     D = -K^-1 u0t (u0t the tangential part of u0), so that
 *                 J0 + D leaves -e un n (normal kept, tangential zero);
 *   J = J0 + s D with s = 1 - k: u' = -e un n + k u0t, linear in s.
 * Energy: the change for an impulse J is dE(J) = J . u + J . K J / 2, so
 *   dE(J0) = -(1 - e^2) un^2 / (2 n . K n) <= 0 (0 when e = 1), and
 *   dE(J0 + s D) - dE(J0) = s (a - q) + s^2 q / 2 with q = D . K D >= 0,
 *   a = -e un (D . n) (from D . u0 = -e un (D . n) - q).
 * That is <= 0 iff s (a - q + s q / 2) <= 0, i.e. s <= 2 (1 - a / q); when
 * a <= q / 2 every s in [0, 1] passes, otherwise s is clamped to
 * max(0, 2 (1 - a / q)) (the coupling of the tangential impulse into the
 * normal direction at an off-centre point would otherwise feed energy in,
 * the known failure of Newton restitution with stick: Stronge, "Impact
 * Mechanics", 2000, ch. 5). So energy never rises above the frictionless
 * answer, which never rises above the energy before. Momentum: b gains J
 * and a loses it (linear), and the angular momentum about any fixed origin
 * O changes by (p - O) x J for b and its opposite for a.
 */
static imp_vec3 collision_apply(const imp_respond_body *a, const imp_respond_turn *ta,
                                const imp_respond_body *b, const imp_respond_turn *tb, imp_vec3 ra,
                                imp_vec3 rb, imp_vec3 x) {
    imp_vec3 r = imp_v3(0.0, 0.0, 0.0);
    if (!a->is_static)
        r = imp_add(imp_scale(x, 1.0 / a->mass),
                    imp_cross(imp_mat3_apply(&ta->inv_inertia, imp_cross(ra, x)), ra));
    if (!b->is_static)
        r = imp_add(r, imp_add(imp_scale(x, 1.0 / b->mass),
                               imp_cross(imp_mat3_apply(&tb->inv_inertia, imp_cross(rb, x)), rb)));
    return r;
}

/* x solving K x = y for the symmetric positive definite K (columns k[0..2]); Cramer's rule */
static imp_vec3 solve3(const imp_vec3 k[3], imp_vec3 y) {
    double det = imp_dot(k[0], imp_cross(k[1], k[2]));
    return imp_v3(imp_dot(y, imp_cross(k[1], k[2])) / det, imp_dot(k[0], imp_cross(y, k[2])) / det,
                  imp_dot(k[0], imp_cross(k[1], y)) / det);
}

static double turning_energy(const imp_respond_body *b, const imp_respond_turn *t, imp_vec3 v,
                             imp_vec3 w) {
    if (b->is_static) return 0.0;
    return 0.5 * b->mass * imp_dot(v, v) + 0.5 * imp_dot(w, imp_mat3_apply(&t->inertia, w));
}

imp_respond_result imp_respond_resolve_turning(const imp_respond_input *in,
                                               const imp_respond_turn *ta,
                                               const imp_respond_turn *tb, imp_vec3 point) {
    assert(ta && tb);
    const imp_respond_body *a = &in->a, *b = &in->b;
    imp_respond_result r = result_start(in);
    r.wa = ta->omega;
    r.wb = tb->omega;
    r.ke_before = turning_energy(a, ta, a->v, ta->omega) + turning_energy(b, tb, b->v, tb->omega);
    r.ke_after = r.ke_before;
    if (a->is_static && b->is_static) {
        r.state = IMP_RESPOND_BOTH_STATIC;
        return r;
    }
    imp_vec3 n = r.normal;
    imp_vec3 ra = imp_sub(point, ta->position), rb = imp_sub(point, tb->position);
    imp_vec3 pa = imp_add(a->v, imp_cross(ta->omega, ra)),
             pb = imp_add(b->v, imp_cross(tb->omega, rb));
    imp_vec3 u = imp_sub(pb, pa);
    double un = dot2v(u, n);
    if (un >= 0.0) {
        r.state = IMP_RESPOND_SEPARATING;
        return r;
    }
    imp_vec3 kcol[3];
    imp_vec3 basis[3] = {imp_v3(1.0, 0.0, 0.0), imp_v3(0.0, 1.0, 0.0), imp_v3(0.0, 0.0, 1.0)};
    for (int i = 0; i < 3; ++i)
        kcol[i] = collision_apply(a, ta, b, tb, ra, rb, basis[i]);
    imp_vec3 kn = collision_apply(a, ta, b, tb, ra, rb, n);
    double jn = -(1.0 + r.e) * un / imp_dot(n, kn);
    imp_vec3 u0 = imp_madd(u, kn, jn);
    imp_vec3 u0t = imp_madd(u0, n, -imp_dot(u0, n));
    imp_vec3 j = imp_scale(n, jn);
    double s = 1.0 - r.k;
    if (s > 0.0 && (u0t.x != 0.0 || u0t.y != 0.0 || u0t.z != 0.0)) {
        imp_vec3 dj = imp_neg(solve3(kcol, u0t));
        double q = -imp_dot(dj, u0t), ap = -r.e * un * imp_dot(dj, n);
        if (q > 0.0 && ap > 0.5 * q) {
            double smax = imp_fmax(0.0, 2.0 * (1.0 - ap / q));
            if (smax < s) {
                s = smax;
                r.clamped = 1;
            }
        }
        if (q > 0.0 && isfinite(q)) j = imp_madd(j, dj, s);
    }
    if (!a->is_static) {
        r.va = imp_madd(a->v, j, -1.0 / a->mass);
        r.wa = imp_sub(ta->omega, imp_mat3_apply(&ta->inv_inertia, imp_cross(ra, j)));
    }
    if (!b->is_static) {
        r.vb = imp_madd(b->v, j, 1.0 / b->mass);
        r.wb = imp_add(tb->omega, imp_mat3_apply(&tb->inv_inertia, imp_cross(rb, j)));
    }
    r.impulse = j;
    r.ke_after = turning_energy(a, ta, r.va, r.wa) + turning_energy(b, tb, r.vb, r.wb);
    r.state = IMP_RESPOND_RESOLVED;
    return r;
}
