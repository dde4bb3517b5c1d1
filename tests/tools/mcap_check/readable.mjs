// Shared by the checks: @mcap/core's IReadable over a fs.promises FileHandle.
export class FileHandleReadable {
  constructor(fh, size) {
    this.fh = fh;
    this.fileSize = size;
  }
  async size() {
    return BigInt(this.fileSize);
  }
  async read(offset, length) {
    const len = Number(length);
    const off = Number(offset);
    if (off + len > this.fileSize) throw new Error(`read past end of file (${off}+${len})`);
    const buf = Buffer.alloc(len);
    let got = 0;
    while (got < len) {
      const { bytesRead } = await this.fh.read(buf, got, len - got, off + got);
      if (bytesRead === 0) throw new Error(`short read at ${off + got}`);
      got += bytesRead;
    }
    return new Uint8Array(buf.buffer, buf.byteOffset, len);
  }
}

