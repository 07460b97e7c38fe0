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

imp_respond_result imp_respond_resolve(const imp_respond_input *in) {
    assert(in);
    check_body(&in->a);
    check_body(&in->b);
    const imp_respond_body *a = &in->a, *b = &in->b;

    imp_respond_result r;
    r.va = a->v;
    r.vb = b->v;
    r.impulse = imp_v3(0.0, 0.0, 0.0);
    r.e = a->restitution * b->restitution;
    r.k = a->tangential * b->tangential;
    int ok = imp_unit_scaled(in->normal, &r.normal, NULL);
    assert(ok == 0);
    (void)ok;
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
