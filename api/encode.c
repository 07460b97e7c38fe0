/*
 * encode.c - response JSON helpers (see encode.h).
 */
#include "api/encode.h"

#include <math.h>

void imp_put(json_t *obj, const char *key, json_t *val, int *ok) {
    if (!val || json_object_set_new(obj, key, val) != 0) *ok = 0;
}

void imp_put_real(json_t *obj, const char *key, double x, int *ok) {
    imp_put(obj, key, json_real(x), ok);
}

json_t *imp_enc_turn(imp_quat q, int dim) {
    if (dim == 2) return json_real(atan2(2.0 * q.w * q.z, q.w * q.w - q.z * q.z));
    double s = q.w < 0.0 ? -1.0 : 1.0;
    json_t *a = json_array();
    double c[4] = {s * q.w, s * q.x, s * q.y, s * q.z};
    for (int i = 0; a && i < 4; ++i)
        if (json_array_append_new(a, json_real(c[i] + 0.0)) != 0) {
            json_decref(a);
            a = NULL;
        }
    return a;
}

json_t *imp_enc_vec(imp_vec3 v, int dim) {
    json_t *a = json_array();
    if (!a) return NULL;
    double c[3] = {v.x, v.y, v.z};
    for (int i = 0; i < dim; ++i) {
        if (json_array_append_new(a, json_real(c[i])) != 0) {
            json_decref(a);
            return NULL;
        }
    }
    return a;
}

json_t *imp_enc_id(const imp_body *b) {
    if (!b->id) return json_integer((json_int_t)b->index);
    if (json_is_string(b->id)) return json_deep_copy(b->id);
    return json_integer((json_int_t)json_number_value(b->id));
}

void imp_jbuf_vec(imp_jbuf *w, imp_vec3 v, int dim) {
    IMP_JBUF_LIT(w, "[");
    imp_jbuf_real(w, v.x);
    IMP_JBUF_LIT(w, ",");
    imp_jbuf_real(w, v.y);
    if (dim == 3) {
        IMP_JBUF_LIT(w, ",");
        imp_jbuf_real(w, v.z);
    }
    IMP_JBUF_LIT(w, "]");
}

void imp_jbuf_id(imp_jbuf *w, const imp_body *b) {
    if (!b->id)
        imp_jbuf_int(w, (long long)b->index);
    else if (json_is_string(b->id))
        imp_jbuf_string(w, json_string_value(b->id), json_string_length(b->id));
    else
        imp_jbuf_int(w, (long long)json_number_value(b->id));
}

double imp_enc_elapsed_ms(const struct timespec *t0, const struct timespec *t1) {
    return (double)(t1->tv_sec - t0->tv_sec) * 1e3 + (double)(t1->tv_nsec - t0->tv_nsec) / 1e6;
}
