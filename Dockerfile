# gameday's image: the static binary on an empty base. It serves the
# reference checkout and the payment stand-in in the Docker environments,
# and can run drills itself.
#
# The binary is built outside (scripts/release.sh or scripts/build-images.sh)
# so that building the image needs no base image from a registry:
#   scripts/release.sh && docker build --build-arg ARCH=amd64 -t gameday:local .
FROM scratch
ARG ARCH=amd64
COPY dist/gameday-linux-${ARCH} /gameday
# A directory the unprivileged user may write: the payment stand-in keeps its
# books there (-data /data) so that they survive a killed container.
COPY --chown=65532:65532 deploy/images/data/ /data/
USER 65532:65532
ENTRYPOINT ["/gameday"]
CMD ["help"]
