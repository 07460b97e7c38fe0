// peers.cpp - Embree 3 and Bullet glue for bench_world_peers.c (see peers.h).
#include "peers.h"

#include <btBulletCollisionCommon.h>
#include <embree3/rtcore.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

namespace {

struct EmbreeScene {
    RTCDevice device;
    RTCScene scene;
};

struct BulletWorld {
    std::vector<float> verts;
    std::vector<int> tris;
    btTriangleIndexVertexArray *array;
    btBvhTriangleMeshShape *shape;
    btCollisionObject *object;
    btDefaultCollisionConfiguration *config;
    btCollisionDispatcher *dispatcher;
    btDbvtBroadphase *broadphase;
    btCollisionWorld *world;
};

} // namespace

extern "C" void *embree_build(const double *verts, size_t n_verts, const uint32_t *tris,
                              size_t n_tris) {
    EmbreeScene *s = new EmbreeScene;
    s->device = rtcNewDevice("threads=1");
    s->scene = rtcNewScene(s->device);
    RTCGeometry g = rtcNewGeometry(s->device, RTC_GEOMETRY_TYPE_TRIANGLE);
    float *v = static_cast<float *>(rtcSetNewGeometryBuffer(
        g, RTC_BUFFER_TYPE_VERTEX, 0, RTC_FORMAT_FLOAT3, 3 * sizeof(float), n_verts));
    for (size_t i = 0; i < 3 * n_verts; ++i)
        v[i] = static_cast<float>(verts[i]);
    unsigned *ix = static_cast<unsigned *>(rtcSetNewGeometryBuffer(
        g, RTC_BUFFER_TYPE_INDEX, 0, RTC_FORMAT_UINT3, 3 * sizeof(unsigned), n_tris));
    std::memcpy(ix, tris, 3 * n_tris * sizeof(unsigned));
    rtcCommitGeometry(g);
    rtcAttachGeometry(s->scene, g);
    rtcReleaseGeometry(g);
    rtcCommitScene(s->scene);
    return s;
}

extern "C" peer_hit embree_ray(void *scene, const double o[3], const double d[3], double max_t) {
    EmbreeScene *s = static_cast<EmbreeScene *>(scene);
    RTCIntersectContext ctx;
    rtcInitIntersectContext(&ctx);
    RTCRayHit rh;
    rh.ray.org_x = static_cast<float>(o[0]);
    rh.ray.org_y = static_cast<float>(o[1]);
    rh.ray.org_z = static_cast<float>(o[2]);
    rh.ray.dir_x = static_cast<float>(d[0]);
    rh.ray.dir_y = static_cast<float>(d[1]);
    rh.ray.dir_z = static_cast<float>(d[2]);
    rh.ray.tnear = 0.0f;
    rh.ray.tfar =
        std::isinf(max_t) ? std::numeric_limits<float>::infinity() : static_cast<float>(max_t);
    rh.ray.mask = ~0u;
    rh.ray.flags = 0;
    rh.ray.time = 0.0f;
    rh.hit.geomID = RTC_INVALID_GEOMETRY_ID;
    rh.hit.instID[0] = RTC_INVALID_GEOMETRY_ID;
    rtcIntersect1(s->scene, &ctx, &rh);
    peer_hit h = {rh.hit.geomID != RTC_INVALID_GEOMETRY_ID, rh.ray.tfar};
    return h;
}

extern "C" void embree_free(void *scene) {
    EmbreeScene *s = static_cast<EmbreeScene *>(scene);
    rtcReleaseScene(s->scene);
    rtcReleaseDevice(s->device);
    delete s;
}

extern "C" void *bullet_build(const double *verts, size_t n_verts, const uint32_t *tris,
                              size_t n_tris) {
    BulletWorld *w = new BulletWorld;
    w->verts.assign(verts, verts + 3 * n_verts);
    w->tris.assign(tris, tris + 3 * n_tris);
    btIndexedMesh m;
    m.m_numTriangles = static_cast<int>(n_tris);
    m.m_triangleIndexBase = reinterpret_cast<const unsigned char *>(w->tris.data());
    m.m_triangleIndexStride = 3 * sizeof(int);
    m.m_numVertices = static_cast<int>(n_verts);
    m.m_vertexBase = reinterpret_cast<const unsigned char *>(w->verts.data());
    m.m_vertexStride = 3 * sizeof(float);
    m.m_vertexType = PHY_FLOAT;
    w->array = new btTriangleIndexVertexArray();
    w->array->addIndexedMesh(m, PHY_INTEGER);
    w->shape = new btBvhTriangleMeshShape(w->array, true);
    w->object = new btCollisionObject();
    w->object->setCollisionShape(w->shape);
    w->config = new btDefaultCollisionConfiguration();
    w->dispatcher = new btCollisionDispatcher(w->config);
    w->broadphase = new btDbvtBroadphase();
    w->world = new btCollisionWorld(w->dispatcher, w->broadphase, w->config);
    w->world->addCollisionObject(w->object);
    w->world->updateAabbs();
    return w;
}

extern "C" peer_hit bullet_ray(void *world, const double o[3], const double d[3], double max_t) {
    BulletWorld *w = static_cast<BulletWorld *>(world);
    btVector3 from(o[0], o[1], o[2]);
    btVector3 to(o[0] + max_t * d[0], o[1] + max_t * d[1], o[2] + max_t * d[2]);
    btCollisionWorld::ClosestRayResultCallback cb(from, to);
    w->world->rayTest(from, to, cb);
    peer_hit h = {cb.hasHit(), cb.hasHit() ? cb.m_closestHitFraction * max_t : 0.0};
    return h;
}

namespace {

// The first hit of `shape` swept from f to t without turning (convexSweepTest): hit and fraction.
peer_hit bullet_sweep(void *world, const btConvexShape *shape, const double f[3],
                      const double t[3]) {
    BulletWorld *w = static_cast<BulletWorld *>(world);
    btTransform a, b;
    a.setIdentity();
    b.setIdentity();
    a.setOrigin(btVector3(f[0], f[1], f[2]));
    b.setOrigin(btVector3(t[0], t[1], t[2]));
    btCollisionWorld::ClosestConvexResultCallback cb(a.getOrigin(), b.getOrigin());
    w->world->convexSweepTest(shape, a, b, cb);
    peer_hit h = {cb.hasHit(), cb.hasHit() ? cb.m_closestHitFraction : 0.0};
    return h;
}

} // namespace

extern "C" peer_hit bullet_sphere_sweep(void *world, double radius, const double f[3],
                                        const double t[3]) {
    btSphereShape sphere(static_cast<btScalar>(radius));
    return bullet_sweep(world, &sphere, f, t);
}

extern "C" peer_hit bullet_capsule_sweep(void *world, double radius, double half_height,
                                         const double f[3], const double t[3]) {
    btCapsuleShape capsule(static_cast<btScalar>(radius), static_cast<btScalar>(2.0 * half_height));
    return bullet_sweep(world, &capsule, f, t);
}

extern "C" void bullet_free(void *world) {
    BulletWorld *w = static_cast<BulletWorld *>(world);
    w->world->removeCollisionObject(w->object);
    delete w->world;
    delete w->broadphase;
    delete w->dispatcher;
    delete w->config;
    delete w->object;
    delete w->shape;
    delete w->array;
    delete w;
}
