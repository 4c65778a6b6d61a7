"""The device image: a Debian rootfs with FRR and network tools, built offline."""

from netdojo.labs.image.recipe import (
    IMAGE_REPOSITORY,
    build_image,
    device_image,
    device_image_id,
    recipe_hash,
)

__all__ = ["IMAGE_REPOSITORY", "build_image", "device_image", "device_image_id", "recipe_hash"]
